// Compiled into the EventGraph module by Tools/fuzz only. See Docs/reliability.md, "Fuzzing".
import Foundation

extension Fuzz {
  /// Writes the binary seeds of the corpus (`Tools/fuzz seeds`): the commit records and
  /// object records of a real store, made through the public API in a scratch directory,
  /// and the store's export as JSON Lines.
  package static func writeSeeds(to directory: String) throws {
    let scratch = NSTemporaryDirectory() + "eventgraph-fuzz-seeds-\(getpid())"
    try? FileManager.default.removeItem(atPath: scratch)
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    let store = try EventStore.create(at: scratch, model: Fuzz.model)
    var ids: [ObjectID] = []
    try store.write(metadata: CommitMetadata(author: "seed", correlationID: "c-1")) { tx in
      let a = try tx.insert(
        "Sample",
        [
          "label": .string("first"), "s": .string("Straße 桃 e\u{301}"), "i16": .int16(-7), "i32": .int32(.max),
          "i64": .int64(.min), "d": .double(-0.5), "f": .float(1.25),
          "dec": .decimal(Fuzz.decimal("12.345")), "b": .boolean(true),
          "t": .date(Date(timeIntervalSince1970: 1_700_000_000.123)), "bin": .binary([0, 1, 255]),
          "u": .uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))),
          "url": .uri("https://example.com/a?b=c"),
        ])
      let b = try tx.insert("Sample", ["s": .string(""), "b": .boolean(false)])
      let t = try tx.insert("Tag", ["name": .string("red")])
      try tx.link(a, "children", b)
      try tx.link(a, "tags", t)
      ids = [a, b, t]
    }
    var metadata = CommitMetadata(idempotencyKey: "k-2")
    metadata.extra = ["reason": "seed", "ticket": "42"]
    try store.write(metadata: metadata) { tx in
      let c = try tx.insert("Sample", ["i64": .int64(1 << 40)])
      try tx.link(ids[0], "children", c, at: 0)
      try tx.set(ids[1], "s", .string("changed"))
      try tx.unlink(ids[0], "tags", ids[2])
      ids.append(c)
    }
    try store.write { tx in try tx.delete(ids[1]) }

    func write(_ bytes: [UInt8], _ target: String, _ name: String) throws {
      let dir = directory + "/" + target
      try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
      try Data(bytes).write(to: URL(fileURLWithPath: dir + "/" + name))
    }
    for r in try store.commitRecords(from: 1) { try write(r.bytes, "commit", "store-commit-\(r.number)") }
    try store.read { s in
      for id in ids {
        guard let state = try s.object(id) else { continue }
        try write(state.encoded(), "record", "store-object-\(id.rawValue)")
      }
    }
    // The metadata fields a plain write does not make: an upcast's source commit, a clone's origin.
    let upcast = Commit(
      number: 9, firstSequence: 120, time: Date(timeIntervalSince1970: 1_700_000_000), modelVersion: 2,
      metadata: CommitMetadata(sourceCommit: 44, clonedFrom: ObjectID(3)),
      events: [.insert(ObjectID(12), entity: EntityID(rawValue: 1)), .delete(ObjectID(5))])
    try write(CommitCodec.encode(upcast), "commit", "made-commit-metadata")
    var lines: [String] = []
    try store.export { lines.append($0) }
    try write(Array(lines.joined(separator: "\n").utf8), "jsonl", "store-export")
    for (i, line) in lines.enumerated() { try write(Array(line.utf8), "jsonl", "store-export-line-\(i + 1)") }
  }
}
