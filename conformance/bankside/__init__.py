"""The bank side of a run: what talks to the target under test. The signed client, the requests
of an operation, the SCA step, the set-up data and the run session.

(Not called ``target/``: build tools and many global git excludes treat a folder of that name as
build output, so a new module there could silently stay out of a commit.)
"""
