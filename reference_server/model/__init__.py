"""The server's state and the data it is made of: the SQLite store (``store``) and the derived
record documents (``records``), the movable clock (``clock``), the payment and consent records
and their status rules (``payment_data``, ``payment_status``), the sandbox records
(``sandbox_data``), the bank a profile describes (``bank_style``), the replay window of
signatures (``replay``), the places the permissive reading reads leniently (``readings``) and
the demanding one strictly (``demands``), the OAuth tokens issued (``tokens``).

The bottom layer: nothing here imports another layer of the server.
"""
