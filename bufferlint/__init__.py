"""bufferlint: find zero-copy views of reused buffers that reach async consumers.

Importing this package must stay cheap and must not import torch: the analyzer runs in
pre-commit on machines without it. The torch-dependent shim lives in ``bufferlint.runtime``.
"""

__version__ = "0.1.0"
