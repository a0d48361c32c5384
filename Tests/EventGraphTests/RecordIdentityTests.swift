import Foundation
import Testing

@testable import EventGraph

/// One identity story: an `ObjectID`, a `Ref` and a `Stored` record name an object alike,
/// and a record reads as of a past sequence.
@Suite("Records: one identity for every operation on an object, and typed time travel")
struct RecordIdentityTests {
  @Test("a Ref and a Stored record are taken where an ObjectID is: clone, version, history, delete")
  func referencesAlike() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    let acme = try #require(
      try store.write { tx in try tx.insert(CompanyRecord(name: "Acme", employees: [], departments: [])) }.value)
    let stored = try #require(try store.record(acme))
    #expect(stored.ref == acme && stored.objectID == acme.id)
    try store.read { s throws in
      #expect(try s.version(of: acme) == s.version(of: acme.id))
      #expect(try s.version(of: stored) == stored.version)
      #expect(try s.history(of: stored) == s.history(of: acme.id))
    }
    // A copy of the record, by the record itself; then by its Ref.
    let byRecord = try store.clone(root: stored)
    let byRef = try store.clone(root: acme)
    #expect(byRecord.root != acme.id && byRef.root != byRecord.root)
    #expect(try store.record(Ref<CompanyRecord>(byRecord.root))?.name == "Acme")
    try store.write { tx in try tx.delete(Ref<CompanyRecord>(byRef.root)) }
    #expect(try store.record(Ref<CompanyRecord>(byRef.root)) == nil)
  }

  @Test("a record as of a sequence is what it was then, with its version then; nil before it existed")
  func timeTravel() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    let made = try store.write { tx in try tx.insert(CompanyRecord(name: "Acme", employees: [], departments: [])) }
    let acme = try #require(made.value)
    let first = try #require(try store.record(acme))
    let madeEnd = try #require(made.commit?.lastSequence)
    let joining = try store.write { tx in try tx.insert(EmployeeRecord(name: "Ada", company: acme, reports: [])) }
    let ada = try #require(joining.value)
    let joinedEnd = try #require(joining.commit?.lastSequence)
    try store.write { tx in try tx.set(acme.id, "name", .string("Acme Ltd")) }
    let now = try #require(try store.record(acme))
    try store.read { s throws in
      let end = try s.logEnd().sequence
      let then = try #require(try s.record(acme, asOf: madeEnd))
      #expect(then.record == first.record && then.version == first.version)
      // After Ada joined, before the rename: her in its employees, the old name.
      let joined = try #require(try s.record(acme, asOf: joinedEnd))
      #expect(joined.name == "Acme" && joined.employees == [ada])
      #expect(joined.version > first.version && joined.version < now.version)
      let latest = try #require(try s.record(acme, asOf: end))
      #expect(latest.record == now.record && latest.version == now.version)
      #expect(try s.record(ada, asOf: madeEnd) == nil)
      #expect(try s.record(acme, asOf: 0) == nil)
      #expect(try s.record(Ref<EmployeeRecord>(acme.id), asOf: end) == nil)
      #expect(throws: StoreError.sequenceBeyondLog(end + 1, last: end)) { try s.record(acme, asOf: end + 1) }
      if first.version < madeEnd {
        #expect(throws: StoreError.sequenceInsideCommit(first.version, commit: 1, first: first.version, last: madeEnd))
        {
          try s.record(acme, asOf: first.version)
        }
      }
    }
  }

  @Test("an expectation of a record's version commits while it is unchanged, and conflicts after a change")
  func unchanged() async throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    let acme = try #require(
      try store.write { tx in try tx.insert(CompanyRecord(name: "Acme", employees: [], departments: [])) }.value)
    let read = try #require(try store.record(acme))
    _ = try await store.commit(expecting: [.unchanged(read)]) { tx in try tx.set(acme.id, "name", .string("B")) }
    let conflict = await #expect(throws: ConflictError.self) {
      _ = try await store.commit(expecting: [.unchanged(read)]) { tx in try tx.set(acme.id, "name", .string("C")) }
    }
    #expect(conflict?.subject == .object(acme.id, name: "Company/\(acme.id.rawValue)"))
    #expect(conflict?.expected == read.version)
    #expect(try store.record(acme)?.name == "B")
  }
}
