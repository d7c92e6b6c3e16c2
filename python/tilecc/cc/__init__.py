"""Coupled-cluster methods written in tilecc's expression API."""

from tilecc.cc.gccsd import GCCSD

__all__ = ["GCCSD"]
