"""Local fake servers, one module per wire protocol, for the provider round-trip tests.

Each speaks its protocol as the provider documents it (the source of every shape is
named in the module) over real HTTP on 127.0.0.1, and answers as a function of the
request (:mod:`.brain`): the weather for the city asked, in the format the request's
system prompt asks for, so concurrent trials never depend on the order of requests.
"""
