// Writes an MCAP file with only a /tf channel, as rosbag2 records one, using @mcap/core's
// McapWriter (an independent writer): schema tf2_msgs/msg/TFMessage (ros2msg), messages in CDR
// (little-endian, 4-byte encapsulation header, ROS 2 alignment) built here.
//   node mcap_write_tf.mjs --node-modules DIR --file F
// Content (ROS axes, REP 103): 100 messages at 100 Hz, each with two transforms:
//   world -> base: translation (1 + 0.01 i, 2, 3), rotation 90 degrees about z
//   base -> arm:   translation (0.5, 0, 0), identity
import { createRequire } from "node:module";
import { open } from "node:fs/promises";
import path from "node:path";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, v, i, all) => (i % 2 ? acc : [...acc, [v.slice(2), all[i + 1]]]), []),
);
const require = createRequire(path.resolve(args["node-modules"], "x.js"));
const { McapWriter } = require("@mcap/core");

class Cdr {
  constructor() { this.buf = new DataView(new ArrayBuffer(4096)); this.o = 4; this.buf.setUint8(1, 1); }
  al(n) { while ((this.o - 4) % n) this.o++; }
  u32(v) { this.al(4); this.buf.setUint32(this.o, v, true); this.o += 4; }
  i32(v) { this.al(4); this.buf.setInt32(this.o, v, true); this.o += 4; }
  f64(v) { this.al(8); this.buf.setFloat64(this.o, v, true); this.o += 8; }
  str(s) { const b = Buffer.from(s + "\0"); this.u32(b.length); for (const x of b) this.buf.setUint8(this.o++, x); }
  bytes() { return new Uint8Array(this.buf.buffer, 0, this.o); }
}

const SEP = "\n" + "=".repeat(80) + "\nMSG: ";
const definition = "geometry_msgs/TransformStamped[] transforms\n" + SEP + "geometry_msgs/TransformStamped\n" +
  "std_msgs/Header header\nstring child_frame_id\nTransform transform\n" + SEP + "std_msgs/Header\n" +
  "builtin_interfaces/Time stamp\nstring frame_id\n" + SEP + "builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n" +
  SEP + "geometry_msgs/Transform\nVector3 translation\nQuaternion rotation\n" + SEP +
  "geometry_msgs/Vector3\nfloat64 x\nfloat64 y\nfloat64 z\n" + SEP +
  "geometry_msgs/Quaternion\nfloat64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n";

const fh = await open(args.file, "w");
const writable = { position: () => BigInt(pos), write: async (d) => { await fh.write(d); pos += d.byteLength; } };
let pos = 0;
const writer = new McapWriter({ writable, chunkSize: 2048 });
await writer.start({ profile: "ros2", library: "mcap_write_tf.mjs" });
const schemaId = await writer.registerSchema({ name: "tf2_msgs/msg/TFMessage", encoding: "ros2msg",
  data: new TextEncoder().encode(definition) });
const channelId = await writer.registerChannel({ topic: "/tf", schemaId, messageEncoding: "cdr",
  metadata: new Map() });
const t0 = 1700000000000000000n;
const s = Math.SQRT1_2;
for (let i = 0; i < 100; i++) {
  const t = t0 + BigInt(i) * 10000000n;
  const c = new Cdr();
  c.u32(2);
  for (const [frame, child, tr, q] of [["world", "base", [1 + 0.01 * i, 2, 3], [0, 0, s, s]],
                                       ["base", "arm", [0.5, 0, 0], [0, 0, 0, 1]]]) {
    c.i32(Number(t / 1000000000n)); c.u32(Number(t % 1000000000n));
    c.str(frame); c.str(child);
    for (const v of tr) c.f64(v);
    for (const v of q) c.f64(v);
  }
  await writer.addMessage({ channelId, sequence: i, logTime: t, publishTime: t, data: c.bytes() });
}
await writer.end();
await fh.close();
