import Foundation
import Testing

@testable import EventGraph

/// The services guide's projection, as the guide writes it: it must index phone numbers
/// only, although another entity's property has the same id.
struct PhoneIndex: Projection {
  let name = "phone-index"
  func apply(_ commit: Commit, to storage: ProjectionStorage) throws {
    for change in try storage.describe(commit) {
      guard change.entity.name == "PhoneBook", change.property?.name == "phoneNumber",
        case .set(let o, _, .string(let number)?) = change.event
      else { continue }
      try storage.put(Array(number.utf8), withUnsafeBytes(of: o.rawValue.bigEndian) { Array($0) })
    }
  }
}

@Suite("Events named by their entity and property")
struct DescribedEventTests {
  @Test("the guide's phone index holds phone numbers only, though a first name has the same property id")
  func guideProjection() throws {
    let model = try Fixtures.addressBookV2()
    let (store, dir) = try makeStore(model)
    defer { removeDirectory(dir) }
    let phone = try #require(model.entity(named: "PhoneBook")?.attribute(named: "phoneNumber"))
    let first = try #require(model.entity(named: "AddressBook")?.attribute(named: "firstName"))
    // What made the old example wrong: the ids alone do not tell the two apart.
    #expect(phone.id == first.id)
    try store.register(PhoneIndex())
    try store.write { tx in
      let momo = try tx.insert("AddressBook", ["firstName": .string("Momo"), "lastName": .string("Taro")])
      let p = try tx.insert("PhoneBook", ["phoneNumber": .string("555-0101")])
      try tx.link(momo, "phones", p)
    }
    let keys = try store.readProjection("phone-index") { view in
      try view.entries().map { String(decoding: $0.key, as: UTF8.self) }
    }
    #expect(keys == ["555-0101"])
  }

  @Test("each kind of event names its object's entity and its property, a deleted object's too")
  func everyKind() throws {
    let model = try Fixtures.addressBookV2()
    let (store, dir) = try makeStore(model)
    defer { removeDirectory(dir) }
    let (momo, p) = try #require(
      try store.write { tx in
        let momo = try tx.insert("AddressBook", ["firstName": .string("Momo"), "lastName": .string("Taro")])
        let p = try tx.insert("PhoneBook", ["phoneNumber": .string("555")])
        try tx.link(momo, "phones", p)
        return (momo, p)
      }.value)
    try store.write { tx in
      try tx.unlink(momo, "phones", p)
      try tx.delete(p)
    }
    let commits = try store.read { try $0.commits() }
    let described = try commits.flatMap { try store.describe($0) }
    #expect(described.map(\.event) == commits.flatMap(\.events))
    for d in described {
      #expect(d.entity.name == (d.object == momo ? "AddressBook" : "PhoneBook"))
      switch d.event {
      case .set(_, let a, _): #expect(d.property?.id == a && d.entity.property(a)?.name == d.property?.name)
      case .link(_, let r, _, _), .unlink(_, let r, _):
        #expect(d.property?.id == r)
        #expect(["phones", "addressBook"].contains(d.property?.name ?? ""))
      default: #expect(d.property == nil)
      }
    }
    #expect(described.contains { if case .delete(p) = $0.event { $0.entity.name == "PhoneBook" } else { false } })
    #expect(described.filter { $0.property?.name == "firstName" }.map(\.object) == [momo])
  }
}
