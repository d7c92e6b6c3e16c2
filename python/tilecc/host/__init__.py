"""Hosts: programs that provide molecules, orbitals and integrals to tilecc (PySCF for now)."""
