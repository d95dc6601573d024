"""Reference implementation of the whole interface on the standard library's ``http.server``."""
