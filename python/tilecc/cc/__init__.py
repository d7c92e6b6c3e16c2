"""Coupled-cluster methods written in tilecc's expression API."""

from tilecc.cc.drccd import DRCCD
from tilecc.cc.gccsd import GCCD, GCCSD

__all__ = ["DRCCD", "GCCD", "GCCSD"]
