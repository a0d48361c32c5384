import EventGraph
import Foundation
import TestSupport
import Testing

@testable import EventGraphMigration

/// Strict commutation, in bytes, at every commit boundary k of random histories.
///
/// The upcast of the source log's first k commits is, commit for commit and byte for byte
/// (identities, times and metadata included), a prefix of the upcast of the whole log, and
/// its projections are what that prefix's replay makes. A following upcast, which keeps a
/// new version caught up commit by commit, relies on it.
@Suite("Upcasting is prefix-stable: every boundary's upcast is a prefix of the whole one, in bytes")
struct PrefixCommutationTests {
  @Test("the seed's phone split (splits, emptied phones, deletes)", arguments: [3, 4] as [UInt64])
  func seedSplit(seed: UInt64) throws {
    try Self.check(v1: try Examples.v1(), v2: try Examples.v2(), mapping: try Examples.mapping()) { store in
      try Histories.addressBook(store, seed: seed, commits: 24)
    }
  }

  @Test("a Swift policy that creates objects", arguments: [9] as [UInt64])
  func policy(seed: UInt64) throws {
    var registry = PolicyRegistry()
    registry.register(AddressBookToPhoneBook(), as: "AddressBookToPhoneBook")
    try Self.check(v1: try Examples.v1(), v2: try Examples.v2(), mapping: try policyMapping(), policies: registry) {
      store in
      try Histories.addressBook(store, seed: seed, commits: 20)
    }
  }

  @Test("ordered employees inserted and moved, many-to-many, deletes (inferred)", arguments: [55, 56] as [UInt64])
  func company(seed: UInt64) throws {
    try Self.check(v1: try Histories.companyV1(), v2: try Histories.companyV2(), mapping: nil) { store in
      try Histories.company(store, seed: seed, commits: 24)
    }
  }

  @Test("two relationships through an entity that goes, merged into one", arguments: [25] as [UInt64])
  func merge(seed: UInt64) throws {
    try Self.check(
      v1: try model(Histories.staffV1), v2: try model(Histories.staffV2), mapping: try mapping(Histories.staffMapping)
    ) { store in
      try Histories.staff(store, seed: seed, commits: 20)
    }
  }

  /// Upcasts the whole history, then, for every boundary k, a store of its first k commits
  /// (copied record for record), and compares.
  static func check(
    v1: Model, v2: Model, mapping: MappingModel?, policies: PolicyRegistry = .init(),
    history: (EventStore) throws -> Void
  ) throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let records = try {
      let store = try EventStore.create(at: dir + "/whole", model: v1)
      try history(store)
      return try store.commitRecords(from: 1, maxCommits: .max)
    }()
    _ = try EventStore.upcast(at: dir + "/whole", to: v2, mapping: mapping, policies: policies)
    let whole = try EventStore(path: dir + "/whole", options: StoreOptions(readOnly: true))
      .commitRecords(from: 1, maxCommits: .max)
    #expect(records.count > 10 && whole.count > 5)
    for k in 0...records.count {
      let path = dir + "/prefix\(k)"
      do {
        let store = try EventStore.create(at: path, model: v1)
        if k > 0 { try store.appendCommitRecords(Array(records.prefix(k))) }
      }
      _ = try EventStore.upcast(at: path, to: v2, mapping: mapping, policies: policies)
      let prefix = try EventStore(path: path, options: StoreOptions(readOnly: true))
      let upcast = try prefix.commitRecords(from: 1, maxCommits: .max)
      #expect(upcast == Array(whole.prefix(upcast.count)), "boundary \(k): not a prefix of the whole upcast")
      // The whole upcast's next commit comes from a source commit after the boundary.
      if upcast.count < whole.count {
        let next = try whole[upcast.count].decoded().metadata.sourceCommit ?? 0
        #expect(k == 0 || next > records[k - 1].lastSequence, "boundary \(k): the next commit's source")
      }
      // Its projections are what replaying that prefix of the whole upcast makes.
      let replica = dir + "/replica\(k)"
      do {
        let store = try EventStore.create(at: replica, model: v2)
        if !upcast.isEmpty { try store.appendCommitRecords(Array(whole.prefix(upcast.count))) }
      }
      let names = versionDatabases(v2.version).filter { !$0.hasPrefix("log.") }
      #expect(try dumpDatabases(prefix, names) == dumpDatabases(at: replica, names), "boundary \(k): projections")
      if upcast != Array(whole.prefix(upcast.count)) { return }
      removeDirectory(path)
      removeDirectory(replica)
    }
  }
}
