#!/usr/bin/env python3
"""tests/golden/tfevents_ref.py: golden records for tests/unit/io/test_tfevents.c, from TensorBoard's own code.

Independent of lib/io/tfevents.c: the Events are built and serialized by
protobuf (tensorboard.compat.proto.event_pb2), the CRCs come from the
CRC-32C and masking of TensorBoard's reader without TensorFlow
(tensorboard.compat.tensorflow_stub.pywrap_tensorflow.masked_crc32c), and
the TFRecord framing is written here from its definition:
  uint64 length (LE), uint32 masked crc of the length, data, uint32 masked crc of data.

The test also spells the Event bytes out by hand from the protobuf wire
format; this script checks them against protobuf's own before printing.

Needs the tensorboard package (pip install tensorboard); `make check` does
not run this.

Usage: python3 tests/golden/tfevents_ref.py    (prints C arrays to paste)
"""
import struct

from tensorboard.compat.proto import event_pb2, summary_pb2
from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c


def record(data):
    head = struct.pack("<Q", len(data))
    return head + struct.pack("<I", masked_crc32c(head)) + data + struct.pack("<I", masked_crc32c(data))


def c_array(name, b):
    lines = []
    for i in range(0, len(b), 12):
        lines.append("\t" + " ".join("0x%02x," % c for c in b[i : i + 12]))
    return "static const uint8_t %s[%d] = {\n%s\n};" % (name, len(b), "\n".join(lines))


# The first record of a file opened at wall_time 2.0.
first = event_pb2.Event(wall_time=2.0, file_version="brain.Event:2").SerializeToString()
assert first == bytes([0x09, 0, 0, 0, 0, 0, 0, 0, 0x40, 0x1A, 0x0D]) + b"brain.Event:2", first.hex()

# One scalar, loss = 0.25 at step 300, wall_time 1.5.
ev = event_pb2.Event(wall_time=1.5, step=300)
ev.summary.value.add(tag="loss", simple_value=0.25)
scalar = ev.SerializeToString()
by_hand = bytes([0x09, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F, 0x10, 0xAC, 0x02, 0x2A, 0x0D, 0x0A, 0x0B, 0x0A, 0x04])
by_hand += b"loss" + bytes([0x15, 0, 0, 0x80, 0x3E])
assert scalar == by_hand, scalar.hex()

# Zero values are written (simple_value is in a oneof), a zero step is not,
# a negative step is a 10-byte varint, tags keep their bytes (UTF-8).
ev = event_pb2.Event(wall_time=3.0, step=-1)
ev.summary.value.add(tag="a", simple_value=0.0)
ev.summary.value.add(tag="\u00e9/b", simple_value=-2.0)
two = ev.SerializeToString()

print(c_array("first_record", record(first)))
print(c_array("scalar_record", record(scalar)))
print(c_array("two_record", record(two)))
