"""The relational store that grows its own shape: the one naming function (``names``), the
writes the agent's tools make (``tools``), DDL under its lock (``physical``), reads (``selectors``)
and the kinds of claim (``claims``)."""
