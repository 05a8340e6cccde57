"""The one exception fmtcheck.torch raises for bad input."""


class Error(ValueError):
    """Bad input to fmtcheck.torch (a tensor it cannot read, an out_dir it cannot write, a model with
    nothing to record), in one line naming the problem. A ValueError, like the rest of fmtcheck's."""
