"""What talks to the target under test: the signed client, the profile, the requests of an
operation, the SCA step, the set-up data and the run session."""
