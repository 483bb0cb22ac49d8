"""The contract's semantic version: in the OpenAPI schema and in every answer.

Bump the minor number when a parameter or an answer field is added, the major one when
anything a caller relies on changes meaning or disappears.
"""

CONTRACT_VERSION = "1.7.0"
