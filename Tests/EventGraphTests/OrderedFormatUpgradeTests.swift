import Foundation
import LMDB
import TestSupport
import Testing

@testable import EventGraph

@Suite("Store formats 2 and 3 (ordered lists by position, without counts): upgraded when first opened for writing")
struct OrderedFormatUpgradeTests {
  @Test("a format-2 store is refused read-only and upgraded by a writable open: same order, verifies")
  func upgrade() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/store"
    var order: [ObjectID] = []
    let company: ObjectID
    do {
      let store = try EventStore.create(at: path, model: try Fixtures.company())
      company = try store.write { tx in try tx.insert("Company", ["name": .string("ACME")]) }.value!
      try store.write { tx in
        for i in 0..<40 {
          let e = try tx.insert("Employee", ["name": .string("e\(i)")])
          try tx.link(company, "employees", e, at: i % 3 == 0 ? 0 : nil)
        }
      }
      order = try store.read { try $0.related(company, "employees") }
    }
    // Make it what format 2 wrote: ordered entries keyed by a u32 position, no `members`.
    do {
      let env = try Environment(path: path, options: EnvironmentOptions(mapSize: 256 << 20, maxDatabases: 64))
      let meta = try #require(try env.openDatabase("meta", create: false))
      let links = try #require(try env.openDatabase("links.v1", flags: .checksummed, create: false))
      let members = try #require(try env.openDatabase("members.v1", flags: .checksummed, create: false))
      let rel = try #require(try Fixtures.company().entity(named: "Company")?.propertyID(named: "employees"))
      try env.write { txn in
        let prefix = StoreKey.links(company, LinkSlot(rel))
        var keys: [[UInt8]] = []
        try txn.forEach(links, from: prefix) { k, _ in
          guard KeyField.hasPrefix(k, prefix) else { return false }
          keys.append([UInt8](k))
          return true
        }
        for k in keys { _ = try txn.delete(links, key: k) }
        for (i, t) in order.enumerated() {
          var key = StoreKey.links(company, LinkSlot(rel))
          key.u32(UInt32(i))
          try txn.put(links, key: key, value: BigEndianKey(t.rawValue))
        }
        try txn.drop(members)
        try txn.put(meta, key: "format", value: "2")
      }
    }
    #expect(throws: StoreError.olderFormat(path: path, found: 2)) {
      _ = try EventStore(path: path, options: StoreOptions(readOnly: true))
    }
    do {
      let store = try EventStore(path: path)
      #expect(try store.read { try $0.related(company, "employees") } == order)
      #expect(try store.verify().isOK)
    }
    let reopened = try EventStore(path: path, options: StoreOptions(readOnly: true, checkPages: true))
    #expect(try reopened.read { try $0.related(company, "employees") } == order)
    #expect(try reopened.verify().isOK)
  }

  @Test("a format-3 store (no count nodes) is refused read-only and upgraded by a writable open: nodes made, verifies")
  func upgradeFromFormat3() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/store"
    let model = try Fixtures.company()
    let rel = LinkSlot(try #require(model.entity(named: "Company")?.propertyID(named: "employees")))
    let (company, order) = try {
      let store = try EventStore.create(at: path, model: model)
      let company = try store.write { tx in
        let c = try tx.insert("Company", ["name": .string("ACME")])
        for i in 0..<(OrderRanks.threshold + 72) {
          try tx.link(c, "employees", try tx.insert("Employee", ["name": .string("e\(i)")]), at: i % 2 == 0 ? 0 : nil)
        }
        return c
      }.value!
      return (company, try store.read { try $0.related(company, "employees") })
    }()
    // What format 3 wrote: no count nodes (the `members` keys of 16 bytes).
    let nodeKeys = { (env: Environment, members: Database) in
      try env.read { txn in
        var found: [[UInt8]] = []
        try txn.forEach(members) { k, _ in
          if k.count == 16 { found.append([UInt8](k)) }
          return true
        }
        return found
      }
    }
    let nodes: [[UInt8]]
    do {
      let env = try Environment(path: path, options: EnvironmentOptions(mapSize: 256 << 20, maxDatabases: 64))
      let meta = try #require(try env.openDatabase("meta", create: false))
      let members = try #require(try env.openDatabase("members.v1", flags: .checksummed, create: false))
      nodes = try nodeKeys(env, members)
      #expect(!nodes.isEmpty)
      try env.write { txn in
        for k in nodes { _ = try txn.delete(members, key: k) }
        try txn.put(meta, key: "format", value: "3")
      }
    }
    #expect(throws: StoreError.olderFormat(path: path, found: 3)) {
      _ = try EventStore(path: path, options: StoreOptions(readOnly: true))
    }
    do {
      let store = try EventStore(path: path)
      #expect(try store.read { try $0.related(company, "employees") } == order)
      #expect(try store.read { try $0.reader.orderedPosition(company, rel, of: order[150]) } == 150)
      #expect(try store.verify().isOK)
    }
    let env = try Environment(path: path, options: EnvironmentOptions(mapSize: 256 << 20, maxDatabases: 64))
    let members = try #require(try env.openDatabase("members.v1", flags: .checksummed, create: false))
    #expect(try nodeKeys(env, members) == nodes)
  }
}
