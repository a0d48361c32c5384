import Foundation
import TestSupport
import Testing

@testable import EventGraph

@Suite("eventtool erase, killed with SIGKILL")
struct EraseKillTests {
  static func model() throws -> Model {
    try Model(
      name: "People", version: 1,
      entities: [
        EntityDescription(
          name: "Person",
          attributes: [
            AttributeDescription(name: "name", type: .string, isOptional: true, isPersonal: true),
            AttributeDescription(name: "nick", type: .string, isOptional: true),
          ])
      ])
  }

  /// Every file under `dir`, read whole.
  static func files(_ dir: String) -> [(String, Data)] {
    let names = FileManager.default.enumerator(atPath: dir)?.compactMap { $0 as? String } ?? []
    return names.compactMap { name in FileManager.default.contents(atPath: dir + "/" + name).map { (name, $0) } }
  }

  @Test(
    "erase killed at random moments: each subject is wholly readable with no erasure event, or wholly erased with one, and its key is gone once the store is opened again"
  )
  func killedAtRandom() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let key = dir + "/people.key"
    try EventStore.generateKeyFile(at: key)
    let path = dir + "/people"
    let count = 40
    let (people, keys): ([ObjectID], [ObjectID: Data]) = try {
      let store = try EventStore.create(at: path, model: try Self.model(), options: StoreOptions(keyFile: key))
      let people = try store.write { tx in
        try (0..<count).map { i in
          try tx.insert("Person", ["name": .string("Secret \(i)"), "nick": .string("n\(i)")])
        }
      }.value!
      var keys: [ObjectID: Data] = [:]
      try store.env.read { txn in
        for p in people { keys[p] = try store.dbs.keyring?.testingDataKey(p, in: txn).map { Data($0) } }
      }
      return (people, keys)
    }()
    #expect(keys.count == count)
    // How long an erasure takes here, uninterrupted: the kills land across it, most near its
    // end, where the commit is made durable and the key's slot overwritten.
    let started = Date()
    #expect(try ToolRunner.eventtool(["erase", path, "Person/\(people[0].rawValue)"]).status == 0)
    // The first run pays for cold caches: every fourth run goes uninterrupted and its time
    // becomes the span the next kills are drawn from, so the kills follow the machine's
    // speed instead of assuming one. The first kill comes at once, so that at least one
    // lands however fast the machine is; whether the others land is the machine's affair.
    var whole = max(10, Int(Date().timeIntervalSince(started) * 1000))
    var g = SeededGenerator(seed: 2026)
    var (kills, erased, kept, pendingSeen) = (0, 1, 0, 0)
    for (i, p) in people.enumerated().dropFirst() {
      let run = Process()
      run.executableURL = ToolRunner.productsDirectory.appendingPathComponent("eventtool")
      run.arguments = ["erase", path, "Person/\(p.rawValue)"]
      run.standardOutput = FileHandle.nullDevice
      run.standardError = FileHandle.nullDevice
      let began = Date()
      try run.run()
      if i % 4 != 0 {
        if i > 1 { usleep(UInt32(g.int(whole / 3...whole * 6 / 5)) * 1000) }
        if run.isRunning {
          kill(run.processIdentifier, SIGKILL)
          kills += 1
        }
      }
      run.waitUntilExit()
      if i % 4 == 0 { whole = max(2, Int(Date().timeIntervalSince(began) * 1000)) }
      // Read as a reader finds it, before any writer opens the store again.
      let store = try EventStore(path: path, options: StoreOptions(readOnly: true, keyFile: key))
      let pending = try store.env.read { try $0.get(store.dbs.keyring!.meta, key: PrivacyKey.erasing) } ?? []
      if !pending.isEmpty { pendingSeen += 1 }
      try store.read { s in
        let events = try s.commits().flatMap(\.events)
        let hasEvent = events.contains(.erase(p, reason: nil))
        let name = try s.value(p, "name")
        if hasEvent {
          erased += 1
          guard case .sealed(let v)? = name else {
            Issue.record("Person/\(p.rawValue) has its erasure event and its value reads \(String(describing: name))")
            return
          }
          #expect(v.state == .erased)
        } else {
          kept += 1
          #expect(name == .string("Secret \(i)"), "Person/\(p.rawValue) lost its value without an erasure event")
        }
        #expect(try s.value(p, "nick") == .string("n\(i)"))
      }
    }
    #expect(kills > 0)
    // A writable open overwrites the slots of erasures committed before a kill.
    let store = try EventStore(path: path, options: StoreOptions(keyFile: key))
    #expect(try store.env.read { try $0.get(store.dbs.keyring!.meta, key: PrivacyKey.erasing) } == nil)
    let log = try store.read { try $0.commits().flatMap(\.events) }
    for p in people where log.contains(.erase(p, reason: nil)) {
      let k = try #require(keys[p])
      for (name, bytes) in Self.files(path) {
        #expect(bytes.range(of: k) == nil, "\(name) holds the data key of the erased Person/\(p.rawValue)")
      }
    }
    #expect(try store.verify().isOK)
    print(
      "erase kills (a whole run \(whole) ms): \(kills) killed, \(erased) erased, \(kept) kept, \(pendingSeen) seen between the commit and the key's overwrite"
    )
  }
}
