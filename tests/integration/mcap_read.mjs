// Reads an MCAP file with @mcap/core (the format's own TypeScript library) and prints what it
// found as JSON for tests/integration/test_mcap.py: the header, channels and schemas, the summary
// statistics, and every message (channel topic, times, the payload in hex).
//   node mcap_read.mjs --node-modules DIR --file F --mode indexed|stream
// indexed: McapIndexedReader (needs the summary: a cleanly closed file); stream: McapStreamReader
// (reads up to the last complete record: a file whose writer was killed).
// Chunks are decompressed with fzstd (zstd) and lz4js (lz4).
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import path from "node:path";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, v, i, all) => (i % 2 ? acc : [...acc, [v.slice(2), all[i + 1]]]), []),
);
const require = createRequire(path.resolve(args["node-modules"], "x.js"));
const { McapIndexedReader, McapStreamReader } = require("@mcap/core");
const fzstd = require("fzstd");
const lz4 = require("lz4js");

const decompressHandlers = {
  zstd: (data, size) => fzstd.decompress(data, new Uint8Array(Number(size))),
  lz4: (data) => Uint8Array.from(lz4.decompress(data)),
};

const bytes = readFileSync(args.file);
const hex = (u8) => Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength).toString("hex");
const big = (v) => v.toString();
const out = { mode: args.mode, channels: {}, schemas: {}, messages: [], metadata: [] };

if (args.mode === "indexed") {
  const readable = {
    size: async () => BigInt(bytes.length),
    read: async (offset, size) => bytes.subarray(Number(offset), Number(offset + size)),
  };
  const reader = await McapIndexedReader.Initialize({ readable, decompressHandlers });
  out.header = reader.header;
  for (const [id, s] of reader.schemasById)
    out.schemas[id] = { name: s.name, encoding: s.encoding, data: Buffer.from(s.data).toString("utf8") };
  for (const [id, c] of reader.channelsById)
    out.channels[id] = { topic: c.topic, schemaId: c.schemaId, messageEncoding: c.messageEncoding };
  const st = reader.statistics;
  out.statistics = st && {
    messageCount: big(st.messageCount),
    chunkCount: st.chunkCount,
    channelMessageCounts: Object.fromEntries([...st.channelMessageCounts].map(([k, v]) => [k, big(v)])),
  };
  out.chunkIndexes = reader.chunkIndexes.length;
  for await (const m of reader.readMetadata()) out.metadata.push({ name: m.name, metadata: Object.fromEntries(m.metadata) });
  for await (const m of reader.readMessages())
    out.messages.push({ channel: m.channelId, seq: m.sequence, log: big(m.logTime), pub: big(m.publishTime), data: hex(m.data) });
} else {
  const reader = new McapStreamReader({ decompressHandlers, validateCrcs: true });
  reader.append(bytes);
  let rec;
  while ((rec = reader.nextRecord())) {
    if (rec.type === "Header") out.header = { profile: rec.profile, library: rec.library };
    else if (rec.type === "Schema")
      out.schemas[rec.id] = { name: rec.name, encoding: rec.encoding, data: Buffer.from(rec.data).toString("utf8") };
    else if (rec.type === "Channel")
      out.channels[rec.id] = { topic: rec.topic, schemaId: rec.schemaId, messageEncoding: rec.messageEncoding };
    else if (rec.type === "Metadata") out.metadata.push({ name: rec.name, metadata: Object.fromEntries(rec.metadata) });
    else if (rec.type === "Message")
      out.messages.push({ channel: rec.channelId, seq: rec.sequence, log: big(rec.logTime), pub: big(rec.publishTime), data: hex(rec.data) });
    else if (rec.type === "Footer") out.footer = true;
  }
  out.done = reader.done();
}
process.stdout.write(JSON.stringify(out));
