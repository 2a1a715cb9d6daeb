"""Label and field selectors as the Kubernetes API server parses them (labelSelector= and
fieldSelector= of a list): comma-separated requirements, all of which must hold.

Label selectors: `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k` (exists), `!k`
(does not exist). `k!=v` and `notin` also match objects without the label, as in Kubernetes.
Field selectors: `path=v`, `path==v`, `path!=v` on the few fields the fake supports.
"""

import re

_KEY = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                  r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$")
_SET = re.compile(r"^\s*(\S+)\s+(in|notin)\s*\(([^)]*)\)\s*$")


class SelectorError(ValueError):
    pass


def _split(text):
    """The requirements of a selector: commas outside parentheses separate them."""
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return [p.strip() for p in parts if p.strip()]


def _check(key, values):
    if not _KEY.match(key):
        raise SelectorError("invalid label key %r" % key)
    for v in values:
        if not _VALUE.match(v):
            raise SelectorError("invalid label value %r" % v)


def parse_labels(text):
    """A list of (key, operator, values); raises SelectorError naming the bad part."""
    requirements = []
    for part in _split(text or ""):
        m = _SET.match(part)
        if m:
            values = [v.strip() for v in m.group(3).split(",") if v.strip()]
            if not values:
                raise SelectorError("for 'in', 'notin' operators, values set can't be empty")
            _check(m.group(1), values)
            requirements.append((m.group(1), m.group(2), set(values)))
            continue
        op = next((o for o in ("!=", "==", "=") if o in part), None)
        if op:
            key, value = (s.strip() for s in part.split(op, 1))
            _check(key, [value])
            requirements.append((key, "!=" if op == "!=" else "=", {value}))
        elif part.startswith("!"):
            _check(part[1:].strip(), [])
            requirements.append((part[1:].strip(), "!", set()))
        else:
            _check(part, [])
            requirements.append((part, "exists", set()))
    return requirements


def labels_match(requirements, labels):
    labels = labels or {}
    for key, op, values in requirements:
        present = key in labels
        if op in ("=", "in") and not (present and labels[key] in values):
            return False
        if op in ("!=", "notin") and present and labels[key] in values:
            return False
        if op == "exists" and not present:
            return False
        if op == "!" and present:
            return False
    return True


FIELDS = {"metadata.name", "metadata.namespace", "status.phase", "spec.nodeName",
          "status.successful"}


def parse_fields(text):
    requirements = []
    for part in _split(text or ""):
        op = next((o for o in ("!=", "==", "=") if o in part), None)
        if not op:
            raise SelectorError("invalid field selector: %r" % part)
        path, value = (s.strip() for s in part.split(op, 1))
        if path not in FIELDS:
            raise SelectorError('field label not supported: %s' % path)
        requirements.append((path, op != "!=", value))
    return requirements


def _field(obj, path):
    if path == "status.successful":
        return str(obj.get("status", {}).get("succeeded", 0))
    value = obj
    for name in path.split("."):
        value = value.get(name, {}) if isinstance(value, dict) else {}
    return value if isinstance(value, str) else ""


def fields_match(requirements, obj):
    return all((_field(obj, path) == value) == equal for path, equal, value in requirements)
