"""A whole number from a query string or a search box, read as a bigint column can hold it."""


def whole_number(text: str) -> int | None:
    """`text` as a non-negative integer of at most 18 ASCII digits, or None.

    Not str.isdigit() alone: "²" is a digit to it and int() refuses it (a 500), and a
    longer run of digits is past what a bigint holds.
    """
    if text.isascii() and text.isdigit() and len(text) <= 18:
        return int(text)
    return None
