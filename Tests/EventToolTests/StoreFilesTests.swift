import EventGraph
import Foundation
import Testing

/// A store's directory and files are its owner's alone, whoever makes them, and a store
/// found open to others is reported.
@Suite("Store files: the owner's alone (0700 and 0600), and reported when open to others")
struct StoreFilesTests {
  /// The permission bits of `path`.
  static func mode(_ path: String) -> mode_t {
    var st = stat()
    return stat(path, &st) == 0 ? st.st_mode & 0o777 : 0o7777
  }

  /// The directory's mode and each regular file's in it, by name ("." for the directory).
  static func modes(_ dir: String) throws -> [String: mode_t] {
    var found = [".": mode(dir)]
    for name in try FileManager.default.contentsOfDirectory(atPath: dir) { found[name] = mode(dir + "/" + name) }
    return found
  }

  static func expectPrivate(_ dir: String, _ what: String) throws {
    let found = try modes(dir)
    #expect(found["."] == 0o700, "\(what): directory mode \(String(found["."] ?? 0, radix: 8))")
    #expect(found["data.mdb"] == 0o600, "\(what): data.mdb mode \(String(found["data.mdb"] ?? 0, radix: 8))")
    for (name, m) in found where name != "." {
      #expect(m & 0o077 == 0, "\(what): \(name) has mode \(String(m, radix: 8))")
    }
  }

  @Test("every way of making a store makes it its owner's alone")
  func madePrivate() throws {
    let dir = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let model = try Model(contentsOf: examples + "/Company.model.json")
    let store = try EventStore.create(at: dir + "/store", model: model)
    try store.write { tx in _ = try tx.insert("Company", ["name": .string("Acme")]) }
    try Self.expectPrivate(dir + "/store", "create")
    // A directory that existed (empty, made open) is closed when a store is created in it.
    try FileManager.default.createDirectory(atPath: dir + "/given", withIntermediateDirectories: false)
    #expect(chmod(dir + "/given", 0o755) == 0)
    _ = try EventStore.create(at: dir + "/given", model: model)
    try Self.expectPrivate(dir + "/given", "create in an existing directory")
    _ = try store.backup(to: dir + "/backup")
    try Self.expectPrivate(dir + "/backup", "backup")
    try FileManager.default.createDirectory(atPath: dir + "/copy", withIntermediateDirectories: false)
    try store.copy(to: dir + "/copy")
    try Self.expectPrivate(dir + "/copy", "copy")
    let init_ = try ToolRunner.eventtool(["init", dir + "/cli.store", "--model", examples + "/Company.model.json"])
    #expect(init_.status == 0, "\(init_.err)")
    try Self.expectPrivate(dir + "/cli.store", "eventtool init")
    let salvaged = try ToolRunner.eventtool(["salvage", dir + "/cli.store", "--out", dir + "/salvaged"])
    #expect(salvaged.status == 0, "\(salvaged.err)")
    try Self.expectPrivate(dir + "/salvaged", "salvage")
    let compacted = try ToolRunner.eventtool(["compact", dir + "/cli.store"])
    #expect(compacted.status == 0, "\(compacted.err)")
    try Self.expectPrivate(dir + "/cli.store", "compact")
  }

  @Test("stats and verify report a store open to others, and verify still passes")
  func reportedWhenOpen() throws {
    let dir = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let store = dir + "/store"
    let made = try ToolRunner.eventtool(["init", store, "--model", examples + "/Company.model.json"])
    #expect(made.status == 0, "\(made.err)")
    let closed = try ToolRunner.eventtool(["stats", store, "--json"])
    #expect(closed.status == 0 && closed.out.contains("\"openToOthers\": []"), "\(closed.out)")
    #expect(chmod(store, 0o755) == 0 && chmod(store + "/data.mdb", 0o644) == 0)
    let stats = try ToolRunner.eventtool(["stats", store])
    #expect(stats.status == 0, "\(stats.err)")
    #expect(stats.out.contains("access   \(store) is open to others (mode 755)"), "\(stats.out)")
    #expect(stats.out.contains("access   \(store)/data.mdb is open to others (mode 644)"))
    #expect(!stats.out.contains("lock.mdb is open"))
    let verify = try ToolRunner.eventtool(["verify", store])
    #expect(verify.status == 0, "\(verify.err)")
    #expect(verify.err.contains("warning: \(store)/data.mdb is open to others (mode 644)"), "\(verify.err)")
    #expect(verify.out.hasPrefix("ok:"))
    let report = try EventStore(path: store, options: StoreOptions(readOnly: true)).verify()
    #expect(report.isOK && report.warnings.count == 2, "\(report.warnings)")
  }
}
