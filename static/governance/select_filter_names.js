// Django's two-box member picker (SelectFilter2.js) names each filter box with an aria-label on a bare <span>,
// a name ARIA does not let a generic element carry (axe-core aria-prohibited-attr). As an image the span may
// carry it, and its label then names the box. Loaded after SelectFilter2.js, so this runs after it built them.
'use strict';
window.addEventListener('load', () => {
  document.querySelectorAll('.selector-filter .search-label-icon[aria-label]:not([role])')
    .forEach((icon) => icon.setAttribute('role', 'img'));
});
