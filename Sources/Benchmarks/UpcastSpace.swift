import EventGraph
import Foundation

/// The space an upcast takes: LMDB's file never shrinks, so the data file after the upcast
/// is its peak; beside it, the same store compacted (both versions kept, as a rollback
/// needs) and compacted without the old version.
enum UpcastSpace {
  /// The data file's size of the store at `path`, in bytes.
  static func fileSize(_ path: String) throws -> Int {
    try FileManager.default.attributesOfItem(atPath: path + "/data.mdb")[.size] as? Int ?? 0
  }

  /// The file's size and the free pages' bytes of the store at `path`, just upcast.
  static func afterUpcast(_ path: String) throws -> (peak: Int, free: Int) {
    let st = try EventStore(path: path, options: StoreOptions(readOnly: true)).statistics()
    return (try fileSize(path), st.freePages * st.pageSize)
  }

  /// Adds the rows for the store at `path`, measured before and after compacting it.
  ///
  /// The store was upcast from one whose file had `sourceSize` bytes, to `upcast`. It is
  /// compacted in place: run this last.
  static func measure(
    _ path: String, sourceSize: Int, upcast: (peak: Int, free: Int), people n: Int, table: inout BenchmarkTable
  ) throws {
    let peak = upcast.peak
    let copy = try temporaryDirectory(prefix: "bench-upcast-copy")
    defer { try? removeDirectory(copy) }
    try EventStore(path: path, options: StoreOptions(readOnly: true)).copy(to: copy, compact: true)
    let finished = try fileSize(copy)
    // compact beside LMDB's own compacting copy of the same file (which swaps nothing in).
    let tool = try temporaryDirectory(prefix: "bench-mdb-copy")
    defer { try? removeDirectory(tool) }
    let toolStart = monotonicSeconds()
    let copier = Process()
    copier.executableURL = URL(fileURLWithPath: "/usr/bin/mdb_copy")
    copier.arguments = ["-c", path, tool]
    try copier.run()
    copier.waitUntilExit()
    let toolSeconds = monotonicSeconds() - toolStart
    let start = monotonicSeconds()
    _ = try EventStore.compact(at: path)
    let compactSeconds = monotonicSeconds() - start
    let compacted = try EventStore.compact(at: path, dropVersionsBefore: 2, droppingRollbackVersion: true)
    let mib = { (bytes: Int) in Double(bytes) / 1_048_576 }
    table.add("upcast space: v1 store's file before the upcast (\(n) people)", value: mib(sourceSize), unit: "MiB")
    table.add(
      "upcast space: file after the upcast (its peak) vs the finished store compacted, v1 kept (\(n) people)",
      value: mib(peak), unit: "MiB", baseline: mib(finished), baselineName: "compacted")
    table.add(
      "upcast space: free pages left in the file after the upcast (\(n) people)",
      value: mib(upcast.free), unit: "MiB")
    table.add(
      "upcast space: compact --drop-versions-before 2, the file after (\(n) people)", value: mib(compacted.sizeAfter),
      unit: "MiB")
    table.add(
      "compact of the upcast store (\(mib(peak).rounded()) MiB) vs mdb_copy -c of it (\(n) people)",
      value: compactSeconds, unit: "s", baseline: toolSeconds, baselineName: "mdb_copy -c")
  }
}
