"""Drive real editors, headless, with the set-ups docs/editors.md gives: open the bundled
example's guard module, wait for the diagnostics, ask for code actions on the finding's line
(as the editor asks), apply the first safe fix, save, and wait for the finding to go.

    python scripts/editor_check.py [neovim] [emacs]

Each editor's configuration is taken from docs/editors.md as written (the Neovim 0.7-0.9
snippet, the Emacs eglot one), with `bufferlint` found on PATH (this interpreter's). Prints
what each editor saw (the messages, which say where the view came from, the actions offered)
and exits 1 if an editor missed a step. Neovim and Emacs are Debian packages (`apt-get
install neovim emacs-nox elpa-eglot`); a missing editor is reported, not failed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = (ROOT / "docs" / "editors.md").read_text()
GUARD = Path("streamloader") / "executor_utils.py"
MODELS = Path("streamloader") / "models.py"

NEOVIM_DRIVER = r'''
local out = { steps = {} }
local function step(name, ok) table.insert(out.steps, { name = name, ok = ok }) end
local function finish()
  local f = io.open(os.getenv("BL_OUT"), "w"); f:write(vim.fn.json_encode(out)); f:close()
  vim.cmd("qall!")
end
local function diagnostics_of(file)
  vim.cmd("edit " .. file)
  local buf = vim.api.nvim_get_current_buf()
  local seen = vim.wait(120000, function() return #vim.diagnostic.get(buf) > 0 end, 100)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do table.insert(found, { code = d.code, message = d.message, line = d.lnum }) end
  return buf, seen, found
end
local models_buf, seen_models, models = diagnostics_of(os.getenv("BL_MODELS"))
out.models = models
step("diagnostics (models.py)", seen_models)
step("the message says where the view came from", seen_models and models[1].message:find("(from `", 1, true) ~= nil)
if seen_models then
  local first = nil
  for _ = 1, 60 do  -- asked before the fixes are planned, the unsafe fix is not offered yet
    local line = models[1].line
    local responses = vim.lsp.buf_request_sync(models_buf, "textDocument/codeAction", {
      textDocument = { uri = vim.uri_from_bufnr(models_buf) },
      range = { start = { line = line, character = 0 }, ["end"] = { line = line, character = 0 } },
      context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics(models_buf, line) },
    }, 30000) or {}
    local titles = {}
    for _, response in pairs(responses) do
      for _, action in ipairs(response.result or {}) do table.insert(titles, action.title) end
    end
    first = titles[1]
    if #titles > 1 then out.models_actions = titles; break end
    vim.wait(500)
  end
  step("the first action on BL001 is not its unsafe fix", first ~= nil and first:sub(1, 6) ~= "Unsafe")
end
local buf, seen, found = diagnostics_of(os.getenv("BL_GUARD"))
out.guard = found
step("diagnostics (executor_utils.py)", seen)
if not seen then return finish() end
local line = found[1].line
local params = {
  textDocument = vim.lsp.util.make_text_document_params(),
  range = { start = { line = line, character = 0 }, ["end"] = { line = line, character = 0 } },
  context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics(buf, line) },
}
local responses = vim.lsp.buf_request_sync(buf, "textDocument/codeAction", params, 30000) or {}
local chosen = nil
out.actions = {}
for _, response in pairs(responses) do
  for _, action in ipairs(response.result or {}) do
    table.insert(out.actions, action.title)
    if chosen == nil and action.edit and action.title:sub(1, 4) == "Fix " then chosen = action end
  end
end
step("code action (cursor at column 0, the line's diagnostics in the context)", chosen ~= nil)
if chosen == nil then return finish() end
vim.lsp.util.apply_workspace_edit(chosen.edit, "utf-16")
out.applied = chosen.title
vim.cmd("write")
step("fix applied and saved", true)
step("finding gone after the save", vim.wait(120000, function() return #vim.diagnostic.get(buf) == 0 end, 100))
finish()
'''

EMACS_DRIVER = r'''
(setq bl-out (getenv "BL_OUT") bl-steps nil bl-result nil)
(defun bl-step (name ok) (push (list (cons 'name name) (cons 'ok (if ok t :json-false))) bl-steps))
(defun bl-finish ()
  (with-temp-file bl-out
    (insert (json-encode (append (list (cons 'steps (vconcat (reverse bl-steps)))) bl-result))))
  (kill-emacs 0))
(defun bl-wait (pred seconds)
  (let ((deadline (+ (float-time) seconds)))
    (while (and (not (funcall pred)) (< (float-time) deadline)) (accept-process-output nil 0.1))
    (funcall pred)))
(defun bl-diagnostics ()
  (mapcar (lambda (d) (flymake-diagnostic-text d)) (flymake-diagnostics)))
(defun bl-open (file)
  (find-file file)
  (python-mode)
  (run-hooks 'post-command-hook)  ; what the command loop does after opening: eglot-ensure connects
  (bl-wait (lambda () (and (eglot-current-server) (progn (flymake-start) (flymake-diagnostics)))) 120))
(condition-case err
    (progn
      (bl-step "diagnostics (models.py)" (bl-open (getenv "BL_MODELS")))
      (push (cons 'models (vconcat (bl-diagnostics))) bl-result)
      (bl-step "the message says where the view came from"
               (string-match-p "(from `" (or (car (bl-diagnostics)) "")))
      (bl-step "diagnostics (executor_utils.py)" (bl-open (getenv "BL_GUARD")))
      (push (cons 'guard (vconcat (bl-diagnostics))) bl-result)
      (goto-char (flymake-diagnostic-beg (car (flymake-diagnostics))))
      (beginning-of-line)
      (let* ((ask (lambda ()
                    (jsonrpc-request (eglot-current-server) :textDocument/codeAction
                      (list :textDocument (eglot--TextDocumentIdentifier)
                            :range (list :start (eglot--pos-to-lsp-position) :end (eglot--pos-to-lsp-position))
                            :context (list :diagnostics
                                           (vconcat (mapcar (lambda (d) (cdr (assoc 'eglot-lsp-diag (flymake-diagnostic-data d))))
                                                            (flymake-diagnostics (line-beginning-position) (line-end-position)))))))))
             (actions (funcall ask))
             (asked 1))
        ;; asked before the fixes are planned, the server offers the suppression alone: ask again
        (while (and (< asked 60) (not (seq-some (lambda (a) (string-prefix-p "Fix " (plist-get a :title))) actions)))
          (accept-process-output nil 0.5)
          (setq actions (funcall ask) asked (1+ asked)))
        (push (cons 'asked asked) bl-result)
        (let ((first (and (> (length actions) 0) (aref actions 0))))
        (push (cons 'actions (vconcat (mapcar (lambda (a) (plist-get a :title)) actions))) bl-result)
        (bl-step "code action (the first is a safe fix)"
                 (and first (string-prefix-p "Fix " (plist-get first :title))))
        (when first
          (eglot--apply-workspace-edit (plist-get first :edit))
          (push (cons 'applied (plist-get first :title)) bl-result)
          (save-buffer)
          (bl-step "fix applied and saved" t)
          (bl-step "finding gone after the save" (bl-wait (lambda () (null (flymake-diagnostics))) 120))))))
  (error (push (cons 'error (format "%S" err)) bl-result)))
(bl-finish)
'''


def snippet(after: str, language: str) -> str:
    """The first ``language`` code block after the line containing ``after`` in the docs."""
    start = DOCS.index(after)
    match = re.compile(rf"```{language}\n(.*?)```", re.S).search(DOCS, start)
    assert match is not None, f"no {language} block after {after!r} in docs/editors.md"
    return match.group(1)


def project() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="bufferlint-editor-")) / "runai_loader"
    shutil.copytree(ROOT / "examples" / "runai_loader", folder,
                    ignore=shutil.ignore_patterns("__pycache__", ".bufferlint_cache"))
    return folder


def run(command: list[str], folder: Path, env: dict) -> dict:
    out = folder.parent / "result.json"
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": str(ROOT), "BL_OUT": str(out), "BL_GUARD": str(folder / GUARD),
           "BL_MODELS": str(folder / MODELS), **env}
    proc = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=600)
    if not out.exists():
        return {"steps": [{"name": "editor ran", "ok": False}], "error": proc.stderr[-2000:] or proc.stdout[-2000:]}
    return json.loads(out.read_text())


def neovim() -> dict:
    folder = project()
    config = folder.parent / "init.lua"
    config.write_text(snippet("On Neovim 0.7 to 0.9", "lua"))
    driver = folder.parent / "driver.lua"
    driver.write_text(NEOVIM_DRIVER)
    return run(["nvim", "--headless", "-u", str(config), "-c", f"luafile {driver}"], folder, {})


def emacs() -> dict:
    folder = project()
    config = folder.parent / "init.el"
    config.write_text("(package-initialize)\n" + snippet("### Emacs (eglot)", "elisp"))
    driver = folder.parent / "driver.el"
    driver.write_text(EMACS_DRIVER)
    return run(["emacs", "--batch", "-l", str(config), "-l", str(driver)], folder, {})


EDITORS = {"neovim": ("nvim", neovim), "emacs": ("emacs", emacs)}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("editors", nargs="*", metavar="EDITOR",
                        help=f"the editors to drive: {', '.join(sorted(EDITORS))} (default: all)")
    names = parser.parse_args(argv).editors
    for name in names:
        if name not in EDITORS:
            parser.error(f"unknown editor {name!r} (choose from {', '.join(sorted(EDITORS))})")
    failed = False
    for name in names or list(EDITORS):
        program, drive = EDITORS[name]
        if shutil.which(program) is None:
            print(f"{name}: not installed ({program} not on PATH): skipped")
            continue
        version = subprocess.run([program, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
        result = drive()
        print(f"{name} ({version}):")
        for step in result["steps"]:
            print(f"  {'ok  ' if step['ok'] is True else 'FAIL'} {step['name']}")
            failed |= step["ok"] is not True
        for key in ("models", "models_actions", "guard", "asked", "actions", "applied", "error"):
            if result.get(key):
                print(f"  {key}: {json.dumps(result[key], indent=None)[:1500]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
