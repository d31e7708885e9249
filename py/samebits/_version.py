"""The version of samebits: the one place it is written. pyproject.toml,
CMakeLists.txt and wasm/build.sh read it from this file, and the library
reports it back (sb_version), which the package checks at import."""
__version__ = "0.1.0"
