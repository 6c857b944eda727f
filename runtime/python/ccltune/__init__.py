"""ccltune: run tuned collective winners inside applications (libccltune's Python side).

`ccltune.torch` registers the runtime's collectives as PyTorch custom ops. The C library is
found through $CCLTUNE_LIBRARY, else as libccltune.so.0 on the loader's path.
"""
__version__ = "0.2.0"
