"""``bufferlint server``: a language server (LSP over stdin/stdout, built on pygls).

It shows in an editor exactly what ``bufferlint check`` reports, through the same API
(``bufferlint.api``, with the editor's unsaved text as overlays), plus what an editor can
do with it: each finding's trace as related locations, its fix and a ``# noqa`` directive
as quick fixes, and "fix all safe fixes in this file". The modules each have one job:

* ``positions``: bufferlint's 1-based character columns to the client's LSP positions;
* ``diagnostics``: findings, file errors and suppression warnings as LSP diagnostics;
* ``ruledocs``: where a diagnostic's code links to (the rule's documentation);
* ``actions``: code actions from a report;
* ``scheduler``: when analyses run (one at a time, coalesced, debounced on typing);
* ``progress``: a long analysis in the editor's progress UI;
* ``session``: which documents belong to which project, and what was last reported;
* ``app``: the pygls wiring (LSP messages in, notifications and edits out).

pygls and lsprotocol come with the optional extra ``bufferlint[lsp]``; nothing else in
bufferlint imports this package.
"""
