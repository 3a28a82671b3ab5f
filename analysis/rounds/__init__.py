"""Review rounds (issue 35): a project's reviews kept as rounds in one review file (a
GeoPackage), with the reviewer's decision on each finding, carried to the next round.

``reviewfile`` (which file is one), ``decisions`` (a decisions file read), ``matching`` (which
finding of the round before is this one), ``checksums`` (what the round was made from),
``record`` (the save, one transaction), ``contract`` (the tables and JSON fields, declared).
"""
