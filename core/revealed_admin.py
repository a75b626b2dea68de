"""Every text an agent or a person chose reaches an admin page revealed (core/display.py), list and record alike.

Django shows a model's text field as escaped text, where a bidi control acts and
right-to-left letters reorder the digits around them. This mixin puts each text
field of the list and of the read-only record page, and each display method that
returns plain text, through `reveal`: the same characters, marked, in the order
they were sent. Display methods that build their own HTML (links, pretty JSON)
reveal their text themselves (core/admin_display.py).
"""

from django.contrib import admin
from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.template.defaultfilters import linebreaksbr
from django.utils.safestring import SafeData

from core.display import reveal


def revealed_value(value):
    """Plain text revealed (line breaks kept); HTML a display method built, and anything not text, unchanged."""
    if isinstance(value, str) and value and not isinstance(value, SafeData):
        return linebreaksbr(reveal(value))
    return value


class RevealedTextMixin:
    def _revealer(self, name, *, in_list: bool = False):
        """The same callable for the same name every time: the admin matches fieldset and read-only entries by
        identity."""
        cache = self.__dict__.setdefault("_revealers", {})
        if (name, in_list) not in cache:
            cache[name, in_list] = self._make_revealer(name, in_list)
        return cache[name, in_list]

    def _make_revealer(self, name, in_list: bool):
        if not isinstance(name, str):
            return name
        try:
            field = self.model._meta.get_field(name)
        except FieldDoesNotExist:
            field = None
        if field is None:
            method = getattr(self, name, None)
            if not callable(method):
                return name

            def shown(obj):
                return revealed_value(method(obj))

            for attribute in ("short_description", "admin_order_field", "boolean", "empty_value_display"):
                if hasattr(method, attribute):
                    setattr(shown, attribute, getattr(method, attribute))
        elif in_list and isinstance(field, models.ForeignKey):  # a list shows the related row by its str()

            @admin.display(description=field.verbose_name, ordering=field.name)
            def shown(obj):
                related = getattr(obj, field.name)
                return None if related is None else revealed_value(str(related))
        elif isinstance(field, (models.CharField, models.TextField)) and not field.choices:

            @admin.display(description=field.verbose_name, ordering=field.name)
            def shown(obj):
                return revealed_value(getattr(obj, field.attname))
        else:
            return name

        shown.__name__ = name  # the column's CSS class stays field-<name>
        return shown

    def get_list_display(self, request):
        return [self._revealer(name, in_list=True) for name in super().get_list_display(request)]

    def get_readonly_fields(self, request, obj=None):
        return [self._revealer(name) for name in super().get_readonly_fields(request, obj)]

    def get_fieldsets(self, request, obj=None):
        readonly = set(super().get_readonly_fields(request, obj))
        return [
            (
                title,
                {
                    **options,
                    "fields": [self._revealer(name) if name in readonly else name for name in options["fields"]],
                },
            )
            for title, options in super().get_fieldsets(request, obj)
        ]
