// Redoc's side menu credits Redocly with a logo from Redocly's CDN. The API docs load nothing
// from another site (the page's CSP refuses it, and says so as an error), so an image whose
// address is on another site is given none: React sets it with setAttribute, other code with
// the src property. Loaded before Redoc's bundle, so nothing renders before it.
const onThisSite = (value) => {
  const url = new URL(String(value), document.baseURI);
  return url.protocol === "data:" || url.origin === location.origin;
};
const setAttribute = Element.prototype.setAttribute;
HTMLImageElement.prototype.setAttribute = function (name, value) {
  if (String(name).toLowerCase() !== "src" || onThisSite(value)) setAttribute.call(this, name, value);
};
const src = Object.getOwnPropertyDescriptor(HTMLImageElement.prototype, "src");
Object.defineProperty(HTMLImageElement.prototype, "src", {
  ...src,
  set(value) {
    if (onThisSite(value)) src.set.call(this, value);
  },
});
