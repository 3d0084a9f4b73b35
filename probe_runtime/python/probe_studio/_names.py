"""Names the model chose (module paths, class names, keyword names) as the dump files carry them.

Python names may hold characters UTF-8 cannot encode (lone surrogates, e.g. from undecodable
bytes): those are written as their escape (U+DC80 becomes the text ``\\udc80``), the same way
for the C++ runtime (bytes), for JSON and for file names, so two such names stay two names and
nothing downstream meets text it cannot encode."""
# SPDX-License-Identifier: GPL-3.0-or-later

# Characters a file name cannot hold, and the escape character itself: %XX, as in URLs.
_FILE_NAME_ESCAPES = str.maketrans({"%": "%25", "/": "%2F", "\0": "%00"})


def safe_text(text):
    """`text`, with each character UTF-8 cannot encode written as its backslash escape."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def name_bytes(text):
    """safe_text(text) as UTF-8 bytes, for the C++ runtime."""
    return safe_text(text).encode("utf-8")


def file_name(text):
    """safe_text(text) as one file name: "/", NUL and "%" written %2F, %00, %25."""
    return safe_text(text).translate(_FILE_NAME_ESCAPES)
