import EventGraph
import Foundation
import TestSupport
import Testing

@testable import EventGraphMigration

/// The commutation law (ARCHITECTURE.md, "Upcasting"): at every v1 commit boundary, the
/// upcast store's state as of the image of that commit equals the mapping of the v1 state
/// there, as a whole-store migration computes it.
@Suite("Upcasting commutes with the mapping")
struct CommutationTests {
  @Test("the seed's phone split, on random address-book histories", arguments: stressSeeds([1, 2, 3, 0xC0FFEE]))
  func seedSplit(seed: UInt64) throws {
    try checkCommutation(
      v1: try Examples.v1(), v2: try Examples.v2(), mapping: try Examples.mapping(),
      kept: [("AddressBook", "AddressBook")]
    ) { store in
      try Histories.addressBook(store, seed: seed, commits: 40)
    }
  }

  @Test("the seed's phone split done by a Swift policy", arguments: stressSeeds([7, 8]))
  func seedSplitByPolicy(seed: UInt64) throws {
    var registry = PolicyRegistry()
    registry.register(AddressBookToPhoneBook(), as: "AddressBookToPhoneBook")
    try checkCommutation(
      v1: try Examples.v1(), v2: try Examples.v2(), mapping: try policyMapping(), policies: registry,
      kept: [("AddressBook", "AddressBook")]
    ) { store in
      try Histories.addressBook(store, seed: seed, commits: 30)
    }
  }

  @Test(
    "a renamed entity and attribute, a widened int16 and an upper-cased code", arguments: stressSeeds([11, 12, 13]))
  func renameAndTypeChange(seed: UInt64) throws {
    try checkCommutation(
      v1: try model(Histories.shopV1), v2: try model(Histories.shopV2), mapping: try mapping(Histories.shopMapping),
      kept: [("Client", "Customer")]
    ) { store in
      try Histories.shop(store, seed: seed, commits: 40)
    }
  }

  @Test("two relationships through an entity that goes, merged into one", arguments: stressSeeds([21, 22, 23, 24]))
  func mergeIntoOneRelationship(seed: UInt64) throws {
    try checkCommutation(
      v1: try model(Histories.staffV1), v2: try model(Histories.staffV2), mapping: try mapping(Histories.staffMapping),
      kept: [("Person", "Person"), ("Company", "Company")]
    ) { store in
      try Histories.staff(store, seed: seed, commits: 40)
    }
  }

  @Test(
    "the destination model's delete rules do not delete what the mapping keeps",
    arguments: ["cascade", "deny"], [31, 32] as [UInt64])
  func destinationDeleteRules(rule: String, seed: UInt64) throws {
    // Company.staff cascades (or denies) in v2; in v1, deleting a company only deletes the
    // employments, and the people stay, without employer. The upcast must do the same.
    let v2 = Histories.staffV2.replacingOccurrences(
      of: "\"inverse\": \"employer\"}", with: "\"inverse\": \"employer\", \"deleteRule\": \"\(rule)\"}")
    #expect(v2 != Histories.staffV2)
    try checkCommutation(
      v1: try model(Histories.staffV1), v2: try model(v2), mapping: try mapping(Histories.staffMapping),
      kept: [("Person", "Person"), ("Company", "Company")]
    ) { store in
      try Histories.staff(store, seed: seed, commits: 40)
    }
  }

  @Test(
    "a relationship through a mapping whose filter looks further away", arguments: stressSeeds([71, 72, 73, 74]))
  func relationshipToFilteredMapping(seed: UInt64) throws {
    // A person's employer exists in v2 only while some employment of that company is a
    // lead's: a role change of one employee makes (or removes) the company for all the
    // others, three links away from the change.
    let m = Histories.staffMapping.replacingOccurrences(
      of: #"{"name": "CompanyToCompany", "source": "Company", "destination": "Company"}"#,
      with:
        #"{"name": "CompanyToCompany", "source": "Company", "destination": "Company", "filter": "ANY employments.role == 'lead'"}"#
    ).replacingOccurrences(of: #", "companyName": "$source.employment.company.name""#, with: "")
    #expect(!m.contains("companyName") && m.contains("lead"))
    try checkCommutation(
      v1: try model(Histories.staffV1), v2: try model(Histories.staffV2), mapping: try mapping(m),
      kept: [("Person", "Person")]
    ) { store in
      try Histories.staff(store, seed: seed, commits: 40)
    }
  }

  @Test(
    "the deep-copy seed's company model, inferred: ordered employees, many-to-many, deny",
    arguments: stressSeeds([51, 52, 53]))
  func companyInferred(seed: UInt64) throws {
    try checkCommutation(
      v1: try Histories.companyV1(), v2: try Histories.companyV2(), mapping: nil,
      kept: [("Company", "Company"), ("Employee", "Employee"), ("Department", "Department")]
    ) { store in
      try Histories.company(store, seed: seed, commits: 40)
    }
  }

  @Test(
    "a chain v1 → v2 → v3 in one pass: the seed split, then new attributes from expressions",
    arguments: stressSeeds([81, 82]))
  func chain(seed: UInt64) throws {
    try checkCommutation(
      v1: try Examples.v1(), through: [try Examples.v2(), try ChainTests.v3()],
      mappings: [try Examples.mapping(), try ChainTests.mapping23()], kept: [("AddressBook", "AddressBook")]
    ) { store in
      try Histories.addressBook(store, seed: seed, commits: 30)
    }
  }

  @Test("a person filtered out and back in keeps the identity a whole-store upcast gives it")
  func filteredOutAndBackIn() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/book"
    let ids = try seedStore(path, thenSet: "momo", [("firstName", .string("x")), ("firstName", .string("桃"))])
    let momo = try #require(ids["momo"])
    let text = String(
      decoding: try #require(FileManager.default.contents(atPath: Examples.root + "/AddressBook.v1-v2.mapping.json")),
      as: UTF8.self)
    let filtered = text.replacingOccurrences(
      of: #""destination": "AddressBook","#, with: #""destination": "AddressBook", "filter": "firstName != 'x'","#)
    #expect(filtered != text)
    _ = try EventStore.upcast(at: path, to: try Examples.v2(), mapping: try mapping(filtered))
    let store = try EventStore(path: path)
    // The person made again after being filtered out comes back as itself, as a
    // whole-store upcast of the final state keeps it.
    let name = try store.read { s throws in try s.object(momo).map { _ in try s.value(momo, "firstName") } }
    #expect(name == .string("桃"))
    #expect(try store.verify().isOK)
    #expect(try store.read { try $0.objects(of: "AddressBook").count } == 3)
  }

  @Test("the final state of a rename upcast is the renamed v1 state, value by value")
  func renameValues() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/shop"
    var ids: [ObjectID] = []
    do {
      let store = try EventStore.create(at: path, model: try model(Histories.shopV1))
      try store.write { tx in
        let a = try tx.insert("Client", ["name": .string("Ann"), "score": .int16(-32768), "code": .string("ab-1")])
        let b = try tx.insert("Client", ["name": .string("Bo"), "code": .string("")])
        try tx.setRelationship(b, "referrer", to: a)
        ids = [a, b]
      }
    }
    _ = try EventStore.upcast(at: path, to: try model(Histories.shopV2), mapping: try mapping(Histories.shopMapping))
    let store = try EventStore(path: path)
    try store.read { s throws in
      #expect(try s.value(ids[0], "fullName") == .string("Ann"))
      #expect(try s.value(ids[0], "score") == .int64(-32768))
      #expect(try s.value(ids[0], "code") == .string("AB-1"))
      #expect(try s.value(ids[1], "score") == .int64(0))
      #expect(try s.value(ids[1], "code") == .string(""))
      #expect(try s.related(ids[1], "referredBy") == [ids[0]])
      #expect(try s.related(ids[0], "referred") == [ids[1]])
    }
  }
}
