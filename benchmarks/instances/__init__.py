"""The certified instance sets, shipped as package data of ``cubebench.instances`` (see README.md here).

Data only: :mod:`cubebench.shipped` finds them and :mod:`cubebench.curriculum` reads and writes them.
"""
