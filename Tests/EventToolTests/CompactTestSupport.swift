import EventGraph
import Foundation
import TestSupport
import Testing

/// Stores for the compaction and backup tests, and what must survive them.
enum CompactFixture {
  /// An address book with history, commits with idempotency keys, a consumer's saved
  /// position and deleted objects (so the file holds free pages).
  static func store(_ path: String, people: Int) async throws {
    try UpcastKillTests.history(path, people: people)
    let store = try EventStore(path: path)
    for i in 0..<20 {
      var metadata = CommitMetadata()
      metadata.idempotencyKey = "order-\(i)"
      try store.write(metadata: metadata) { tx in
        _ = try tx.insert("AddressBook", ["firstName": .string("k\(i)"), "lastName": .string("key")])
      }
    }
    try store.write { tx in
      for id in 1...UInt64(people / 3) { try tx.delete(ObjectID(rawValue: id)) }
    }
    try await store.consumer("mailer").acknowledge(through: 1234)
  }

  /// Every entry of every database of the store, as LMDB's own tool prints them, without
  /// the headers' map size (a compacted copy may record another).
  static func dump(_ path: String) throws -> String {
    let r = try ToolRunner.runSystem("/usr/bin/mdb_dump", ["-a", path])
    #expect(r.status == 0, "\(r.err)")
    return r.out.split(separator: "\n").filter { !$0.hasPrefix("mapsize=") && !$0.hasPrefix("maxreaders=") }
      .joined(separator: "\n")
  }

  /// Starts `eventtool` with `arguments` in the background, its output dropped.
  static func start(_ arguments: [String]) throws -> Process {
    let p = Process()
    p.executableURL = ToolRunner.productsDirectory.appendingPathComponent("eventtool")
    p.arguments = arguments
    p.standardOutput = FileHandle.nullDevice
    p.standardError = FileHandle.nullDevice
    try p.run()
    return p
  }

  /// The store's data file, byte for byte.
  static func dataFile(_ path: String) throws -> Data {
    try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb"))
  }

  /// Runs `eventtool` with `arguments` where no file may grow past `bytes` (as on a full
  /// disk: a write past the limit fails with EFBIG instead of killing the process).
  static func eventtool(limitingFilesTo bytes: Int, _ arguments: [String]) throws -> ToolRunner.Result {
    let tool = ToolRunner.productsDirectory.appendingPathComponent("eventtool").path
    return try ToolRunner.runSystem(
      "/bin/sh", ["-c", "trap '' XFSZ; ulimit -f \(bytes / 512); exec \"$0\" \"$@\"", tool] + arguments)
  }
}
