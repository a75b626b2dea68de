"""Where a value's digits are drawn: a value must show its characters in the order they were sent (SPEC section 4).

"\\u0640 2.5 / 25 \\u0640" (the Arabic tatweel looks like a dash) used to render "ـ 25 / 2.5 ـ": the
tatweel is a right-to-left letter, and the bidi algorithm reversed the digits between the two.
"""

TATWEEL_DOSE = "\u0640 2.5 / 25 \u0640"
HEBREW_DOSE = "\u05de\u05d9\u05e0\u05d5\u05df 2.5 / 25 mg"

# The digits of an element's text (not those of the ⟨U+…⟩ marks), each with the x it is drawn at.
_DIGITS_AND_X = """(el) => {
  const found = [];
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.parentElement.closest('.reveal')) continue;
    for (let i = 0; i < node.data.length; i++) {
      if (!/[0-9]/.test(node.data[i])) continue;
      const range = document.createRange();
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      found.push([node.data[i], range.getBoundingClientRect().left]);
    }
  }
  return found;
}"""


def assert_drawn_in_sent_order(element, digits: str) -> None:
    """`element`'s digits are `digits`, and each is drawn right of the one sent before it."""
    found = element.evaluate(_DIGITS_AND_X)
    assert "".join(digit for digit, _ in found) == digits
    xs = [x for _, x in found]
    assert xs == sorted(xs) and len(set(xs)) == len(xs), f"digits drawn out of order: {found}"
