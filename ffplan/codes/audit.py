"""`ffplan audit`: the discovered fabric it reads."""

from ffplan.codes.code import Code

FABRIC_NOT_IBNETDISCOVER_OUTPUT = Code(
    "FF930",
    "fabric-not-ibnetdiscover-output",
    "the fabric file given to `ffplan audit` or `ffplan reroute --fabric` is not ibnetdiscover output",
)
