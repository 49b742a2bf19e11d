"""The descriptor pool of accord's generated gRPC messages, kept apart from protobuf's default.

The official a2a-sdk registers its own `lf.a2a.v1` and `a2a.v1` messages in the default pool;
two definitions of one symbol cannot share a pool, so accord's live here (`make protos` points
the generated modules at it), and both libraries can be imported by one program.
"""

from google.protobuf import descriptor_pool, empty_pb2, struct_pb2, timestamp_pb2

POOL = descriptor_pool.DescriptorPool()
for _well_known in (empty_pb2, struct_pb2, timestamp_pb2):
    POOL.AddSerializedFile(_well_known.DESCRIPTOR.serialized_pb)
