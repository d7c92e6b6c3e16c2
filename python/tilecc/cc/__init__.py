"""Coupled-cluster methods written in tilecc's expression API."""

from tilecc.cc.gccsd import GCCD, GCCSD

__all__ = ["GCCD", "GCCSD"]
