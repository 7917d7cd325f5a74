"""Reads a Chakra execution trace as `reverie export --chakra` writes it,
and writes a one-collective trace for microbenchmarks.

Only what the benchmark needs: the varint-framed GlobalMetadata then Node
messages (proto/chakra_et.proto documents the framing and field numbers),
with a minimal protobuf wire-format reader and writer so the benchmark needs
no generated code. Nodes are dicts: id, name, type, data_deps, start_us,
duration_us and the attributes by name.
"""

NODE_TYPES = {4: "COMP_NODE", 5: "COMM_SEND_NODE", 6: "COMM_RECV_NODE", 7: "COMM_COLL_NODE"}
COLLECTIVES = {0: "ALL_REDUCE", 2: "ALL_GATHER", 5: "BROADCAST", 6: "ALL_TO_ALL",
               7: "REDUCE_SCATTER"}


def _varint(buf, pos):
    value = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, pos


def _fields(buf):
    """Yields (field number, wire type, value) of one message."""
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 2:
            size, pos = _varint(buf, pos)
            value, pos = buf[pos:pos + size], pos + size
        elif wire == 1:
            value, pos = buf[pos:pos + 8], pos + 8
        elif wire == 5:
            value, pos = buf[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"wire type {wire}")
        yield field, wire, value


def _attr(buf):
    name, value = "", None
    for field, wire, v in _fields(buf):
        if field == 1:
            name = v.decode()
        elif field in (9, 13):  # int64_val, uint64_val
            value = v - (1 << 64) if v >= 1 << 63 else v
        elif field == 27:
            value = bool(v)
        elif field == 29:
            value = v.decode()
    return name, value


def _node(buf):
    node = {"id": 0, "name": "", "type": 0, "data_deps": [], "start_us": 0, "duration_us": 0,
            "attr": {}}
    for field, wire, v in _fields(buf):
        if field == 1:
            node["id"] = v
        elif field == 2:
            node["name"] = v.decode(errors="replace")
        elif field == 3:
            node["type"] = v
        elif field == 5:
            if wire == 2:  # packed
                pos = 0
                while pos < len(v):
                    dep, pos = _varint(v, pos)
                    node["data_deps"].append(dep)
            else:
                node["data_deps"].append(v)
        elif field == 6:
            node["start_us"] = v
        elif field == 7:
            node["duration_us"] = v
        elif field == 10:
            name, value = _attr(v)
            node["attr"][name] = value
    return node


def read(path):
    """The nodes of one .et file, in file order."""
    with open(path, "rb") as f:
        buf = f.read()
    pos, nodes, first = 0, [], True
    while pos < len(buf):
        size, pos = _varint(buf, pos)
        message = buf[pos:pos + size]
        pos += size
        if first:
            first = False  # GlobalMetadata
            continue
        nodes.append(_node(message))
    return nodes


def _put_varint(value):
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | 0x80 if value else byte)
        if not value:
            return bytes(out)


def _put(field, wire, value):
    key = _put_varint(field << 3 | wire)
    return key + (_put_varint(value) if wire == 0 else _put_varint(len(value)) + value)


def write_one_collective(prefix, npus, comm_type, size):
    """PREFIX.0.et .. PREFIX.(npus-1).et: one COMM_COLL_NODE each."""
    def attr(name, field, value):
        return _put(10, 2, _put(1, 2, name.encode()) + _put(field, 0, value))
    meta = _put(1, 2, b"1.0.0")
    node = (_put(1, 0, 0) + _put(2, 2, b"collective") + _put(3, 0, 7) + attr("is_cpu_op", 27, 0)
            + attr("comm_type", 9, comm_type) + attr("comm_size", 9, size))
    for rank in range(npus):
        with open(f"{prefix}.{rank}.et", "wb") as f:
            for message in (meta, node):
                f.write(_put_varint(len(message)) + message)
