"""The graph as arrows in plain text, as the reference draws it.

A chain ``y = f(x)`` is drawn ``x <--- f <--- y``: each arrow points from a
node to what it was computed from, the way backward follows the graph. When
``x`` feeds two functions the drawing branches::

        |--- f <--- y
    x <-+
        |--- g <--- z

The drawing is a tree grown from the inputs (leaf variables) towards the
outputs. A function with several inputs (``x1 + x2``) can sit in only one
branch of a tree: it is drawn in full under its first input and tagged
``[1]``; its other inputs point to the tag (``x2 <--- [1]``). Unnamed
variables are shown by their graph id (``v3``), the same id the DOT text of
``build_computational_graph`` uses. The text depends only on the graph, so
it is the same in every run (safe to check under nbval). Any engine with
minichain's public API is drawn (see ``engine_api``).
"""

from minichain.visualize import engine_api

ARROW = " <--- "


def draw(outputs):
    """Text drawing of the graph behind ``outputs`` (Variable or list)."""
    graph = engine_api.collect(outputs, "draw")
    return _TreeDrawing(graph).text()


class _TreeDrawing:
    """Lays the graph out as trees rooted at the leaf variables.

    Nodes are keyed by ``id``: an engine's Variables may refuse ``hash``.
    """

    def __init__(self, graph):
        self.graph = graph
        self.children = {id(node): [] for node in graph.nodes}
        self.parents = {id(node): [] for node in graph.nodes}
        for tail, head in graph.edges:
            if all(h is not head for h in self.children[id(tail)]):
                self.children[id(tail)].append(head)
            if all(t is not tail for t in self.parents[id(head)]):
                self.parents[id(head)].append(tail)
        order = _reading_order(graph.nodes, self.children)

        def position(node):
            return order[id(node)]

        for nodes in self.children.values():
            nodes.sort(key=position)
        self.roots = sorted(
            [n for n in graph.nodes if not self.parents[id(n)]], key=position)
        self.tags = {}  # id of a shared function -> its tag number, once drawn

    def text(self):
        lines = []
        for root in self.roots:
            lines.extend(self._draw(root)[0])
        return "\n".join(line.rstrip() for line in lines)

    def _name(self, node):
        if self.graph.is_variable(node):
            name = getattr(node, "name", None)
            return name if name is not None else self.graph.node_id(node)
        return node.label

    def _enter(self, node):
        """Start drawing ``node``: a finished ``(lines, row)`` or a frame.

        A frame is ``[name, children, next child, children's drawings]``.
        """
        name = self._name(node)
        if len(self.parents[id(node)]) > 1:  # several inputs: draw once, tag it
            if id(node) in self.tags:
                return ["[{}]".format(self.tags[id(node)])], 0
            self.tags[id(node)] = len(self.tags) + 1
            name = "{} [{}]".format(name, self.tags[id(node)])
        if not self.children[id(node)]:
            return [name], 0
        return [name, self.children[id(node)], 0, []]

    def _draw(self, root):
        """Lines of the tree at ``root`` and the row the root sits on.

        Depth-first with an explicit stack, so a chain of thousands of
        functions needs no recursion.
        """
        stack = [self._enter(root)]
        if isinstance(stack[0], tuple):
            return stack[0]
        while True:
            frame = stack[-1]
            name, children, index, drawn = frame
            if index < len(children):
                frame[2] += 1
                entered = self._enter(children[index])
                if isinstance(entered, tuple):
                    drawn.append(entered)
                else:
                    stack.append(entered)
                continue
            stack.pop()
            result = _join(name, drawn)
            if not stack:
                return result
            stack[-1][3].append(result)


def _join(name, children):
    """``name`` followed by its children's drawings."""
    if len(children) == 1:
        lines, row = children[0]
        pad = " " * (len(name) + len(ARROW))
        return ([name + ARROW + line if i == row else pad + line
                 for i, line in enumerate(lines)], row)
    return _branch(name, children)


def _branch(name, children):
    """``name <-+`` on its own row, each child on a ``|---`` line.

    The node's row goes after the first half of the children; the vertical
    bar runs from the first child's row to the last child's row.
    """
    bar = " " * (len(name) + 3)  # up to the '+' of 'name <-+'
    rows, anchors = [], []
    half = (len(children) + 1) // 2
    for k, (lines, row) in enumerate(children):
        if k == half:
            node_row = len(rows)
            rows.append(None)  # filled in below
        anchors.append(len(rows) + row)
        rows.extend(lines)
    top, bottom = anchors[0], anchors[-1]
    out = []
    for i, line in enumerate(rows):
        if i == node_row:
            out.append(name + " <-+")
        elif i in anchors:
            out.append(bar + "|--- " + line)
        elif top < i < bottom:
            out.append(bar + "|    " + line)
        else:
            out.append(bar + "     " + line)
    return out, node_row


def _reading_order(nodes, children):
    """Index of each node (by id) in a depth-first walk from the outputs.

    Inputs are visited in argument order, so for ``0.3*(x1+x2)+x3`` the
    leaves come out ``x1, x2, x3``: the order a reader meets them.
    """
    members = {id(n) for n in nodes}
    starts = [n for n in nodes if not children[id(n)]]  # nothing computed from it
    order = {}
    stack = list(reversed(starts))
    while stack:
        node = stack.pop()
        if id(node) in order or id(node) not in members:
            continue
        order[id(node)] = len(order)
        if engine_api.is_function(node):
            before = list(engine_api.inputs_of(node))
        else:
            creator = engine_api.creator_of(node)
            before = [creator] if creator is not None else []
        stack.extend(reversed(before))
    for node in nodes:  # not reached from an output: keep the visiting order
        order.setdefault(id(node), len(order))
    return order
