"""Binding: what an assignment target, a ``match`` pattern or a container store does with a
value (names rebound, containers grown, views kept in long-lived holders, markers set)."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import cast
from dataclasses import replace

from bufferlint.analysis.domain.values import (
    EMPTY, ParamRef, Value, container, index, iterate, join, on_host, pinned_buffer,
)
from bufferlint.analysis.frontend.syntax import holder_name, is_slice, short, walk
from bufferlint.analysis.transfer.chosen import forget
from bufferlint.analysis.transfer.effects import Effects
from bufferlint.analysis.transfer.frame import Frame
from bufferlint.analysis.transfer.keyword_maps import stored_key
from bufferlint.analysis.transfer.stores import Stores


class Assignment:
    """Binds values to targets in the frame's state. ``evaluate`` and ``lookup`` come from
    the expression evaluator (a target's subscript or receiver is evaluated too)."""

    def __init__(
        self,
        frame: Frame,
        stores: Stores,
        effects: Effects,
        evaluate: Callable[[ast.expr | None], Value],
        lookup: Callable[[str], Value],
    ) -> None:
        self.frame = frame
        self.stores = stores
        self.effects = effects
        self.eval = evaluate
        self.lookup = lookup

    def assign(self, target: ast.expr, value: Value, stmt: ast.AST) -> None:
        frame = self.frame
        st = frame.st
        if st is None:
            return
        if isinstance(target, ast.Name):
            forget(st, target.id)
            st.vars[target.id] = value
            if target.id in st.stale:
                st.stale = st.stale - {target.id}
            self.stores.release(target.id, None)
            if target.id in frame.info.declared_globals or self.stores.carried_local(target.id):
                # `global CACHE; CACHE = w`: module state; `prev = w` read by the next iteration
                self.stores.retain(stmt, value, target.id, (target.id, None))
            if target.id in frame.info.declared_globals or frame.info.kind == "module":
                self.stores.keep_in_global(target.id, value, stmt)
        elif isinstance(target, (ast.Tuple, ast.List)):
            starred = any(isinstance(e, ast.Starred) for e in target.elts)
            for i, elt in enumerate(target.elts):
                if isinstance(elt, ast.Starred):
                    self.assign(elt.value, container(index(value, None)), stmt)
                else:
                    self.assign(elt, index(value, None if starred else i), stmt)
        elif isinstance(target, ast.Subscript):
            holder = self.eval(target.value)
            if frame.st is None:
                return
            self.write_into(holder, stmt, f"{short(target.value)}[...] = ...", target.slice)
            if on_host(holder) and value.leaves:  # `host[:n] = x`: the CPU copies x's bytes now
                self.effects.read_host(stmt, value, f"{short(target.value)}[...] = ...")
            if self.stores.is_array(target.value, holder) or (is_slice(target.slice) and not holder.collection):
                self.eval(target.slice)  # `t[a:b] = w`, `param.data[i] = w` copy w into t's own storage
                return
            self.store_into(target.value, value, stmt, target.slice, holder)
            self.eval(target.slice)
            if holder.keys is not None and isinstance(target.value, ast.Name) and frame.st is not None:
                # ``kwargs["non_blocking"] = True``: on this path the dict holds it now
                grown = frame.st.vars.get(target.value.id)
                if grown is not None:
                    keys = stored_key(holder, target.slice, value, frame.st.assume)
                    frame.st.vars[target.value.id] = replace(grown, keys=keys)
        elif isinstance(target, ast.Attribute):
            self.eval(target.value)
            vocab = frame.vocab
            if target.attr in vocab.markers:
                self.effects.mark(target.value, stmt, vocab.marker_kind(target.attr))
                return
            if self.stores.outlives_step(target.value, attribute=True):
                self.stores.retain(stmt, value, f"{short(target.value)}.{target.attr}", None)
            self.stores.keep_in_field(target, value, stmt, element=False)
            self.effects.store_futures(holder_name(target) or "", value)
            if value.built and frame.keeps_in_receiver(target):
                # ``self.reader = safe_open(..., copy=False)``: the other methods' ``self.reader``
                # is judged by what its construction said (``owned-if``'s ``built-by``)
                frame.program.store_field(cast(str, frame.info.class_qualname), target.attr,
                                           Value(types=value.types, built=value.built))
        elif isinstance(target, ast.Starred):
            self.assign(target.value, value, stmt)

    def store_into(
        self,
        container_expr: ast.expr,
        value: Value,
        stmt: ast.AST,
        key: ast.expr | None = None,
        holder: Value | None = None,
    ) -> None:
        """``c[k] = v`` (or ``c.append(v)``): the container may now hold ``v``; if the
        container outlives the producer's step, the borrowed value is retained (kept past its
        step)."""
        frame, stores = self.frame, self.stores
        outlives = frame.st is not None and stores.outlives_step(stores.home_of(container_expr))
        if outlives:
            key_text = ast.unparse(key) if key is not None else None
            stores.retain(stmt, value, short(container_expr), (holder_name(container_expr), key_text))
        stores.note_kept(stmt, value, short(container_expr), holder_name(container_expr) if outlives else None)
        st = frame.st
        if isinstance(container_expr, ast.Name) and st is not None:
            old = st.vars.get(container_expr.id)
            if old is None:
                old = self.lookup(container_expr.id)
            grown = join(old, container(value))
            st.vars[container_expr.id] = grown if grown.collection == old.collection else replace(grown, collection=old.collection)
            self.effects.park(container_expr, value)
        elif holder is None:
            self.eval(container_expr)
        if isinstance(container_expr, ast.Attribute):
            stores.keep_in_field(container_expr, value, stmt, element=True)
            self.effects.store_futures(holder_name(container_expr) or "", value)

    def write_into(self, holder: Value, stmt: ast.AST, what: str, key: ast.expr | None = None) -> None:
        """``buf[:n] = x``, ``buf += x``: the statement writes the bytes of ``holder`` (what
        the target indexes, or the in-place operand) now, when it is a pinned buffer (the
        program's own memory, ``Borrow.pinned``) or a parameter that may hold one; a store
        into a list of them rebinds a slot, it writes no buffer. ``key``: the index the
        store writes through, only that part of a pinned buffer is written."""
        if any(pinned_buffer(leaf) or isinstance(leaf, ParamRef) for leaf in holder.leaves):
            region = None if key is None else self.frame.region(key, holder)
            leaves = holder.leaves if region is None else frozenset(
                leaf.as_view(None, region) if pinned_buffer(leaf) else leaf for leaf in holder.leaves
            )
            self.effects.write_host(stmt, Value(leaves=leaves), what)

    def augment(self, stmt: ast.AugAssign) -> None:
        """``kept += [w]``: a container grows by what the right side holds; ``buf += x`` and
        ``buf[:n] += x`` write a tensor or array in place (``write_into``)."""
        target = stmt.target
        operand = target.value if isinstance(target, ast.Subscript) else target
        if not any(isinstance(node, ast.Call) for node in walk(operand)):  # evaluated again below
            subscript = "[...]" if isinstance(target, ast.Subscript) else ""
            what = ast.unparse(ast.AugAssign(target=ast.Name(short(operand) + subscript), op=stmt.op, value=ast.Name("...")))
            key = target.slice if isinstance(target, ast.Subscript) else None
            self.write_into(self.eval(operand), stmt, what, key)
        value = self.eval(stmt.value)
        adds = value.elems is not None or value.items is not None
        st = self.frame.st
        if isinstance(stmt.target, ast.Name) and adds and st is not None:
            outlives = self.stores.outlives_step(stmt.target)
            if outlives:  # `kept += [w]`, `kept |= {name: w}`
                self.stores.retain(stmt, index(value, None), stmt.target.id, (stmt.target.id, None))
            self.stores.note_kept(stmt, value, stmt.target.id, stmt.target.id if outlives else None)
            old = st.vars.get(stmt.target.id, EMPTY)
            grown = container(join(old.elems, iterate(value)), lazy=old.lazy)
            st.vars[stmt.target.id] = replace(grown, collection=old.collection)
        elif isinstance(stmt.target, (ast.Attribute, ast.Subscript)) and adds:
            self.eval(stmt.target)  # `holder.kept += [w]`, `groups[k] += [w]`
            if self.stores.outlives_step(stmt.target.value, attribute=isinstance(stmt.target, ast.Attribute)):
                text = ast.unparse(stmt.target)
                self.stores.retain(stmt, index(value, None), text, (holder_name(stmt.target), None))
        else:
            self.eval(stmt.target)

    def bind_pattern(self, pattern: ast.AST, subject: Value, stmt: ast.AST) -> None:
        st = self.frame.st
        if st is None:
            return
        if isinstance(pattern, ast.MatchAs):
            if pattern.pattern is not None:
                self.bind_pattern(pattern.pattern, subject, stmt)
            if pattern.name:
                st.vars[pattern.name] = subject
        elif isinstance(pattern, ast.MatchStar) and pattern.name:
            st.vars[pattern.name] = container(iterate(subject))
        elif isinstance(pattern, ast.MatchSequence):
            for i, sub in enumerate(pattern.patterns):
                self.bind_pattern(sub, index(subject, i if not isinstance(sub, ast.MatchStar) else None), stmt)
        elif isinstance(pattern, ast.MatchMapping):
            for sub in pattern.patterns:
                self.bind_pattern(sub, index(subject, None), stmt)
            if pattern.rest:
                st.vars[pattern.rest] = subject
        elif isinstance(pattern, ast.MatchClass):
            for sub in pattern.patterns + pattern.kwd_patterns:
                self.bind_pattern(sub, EMPTY, stmt)
        elif isinstance(pattern, ast.MatchOr):
            for sub in pattern.patterns:
                self.bind_pattern(sub, subject, stmt)
