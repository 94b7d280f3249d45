"""The version of the API this build implements (reinfors 0.4.0's; ``rf.__version__``)."""

VERSION = "0.4.0"
