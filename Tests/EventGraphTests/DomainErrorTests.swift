import Foundation
import LMDB
import Testing

@testable import EventGraph
@testable import EventGraphModel

/// The domain errors as structs with codes: every factory gives its code and the message
/// the enum cases gave before (written out here by hand), and equality is by code and fields.
@Suite("StoreError, ModelError and ServiceError")
struct DomainErrorTests {
  static let storeErrors: [(StoreError, StoreError.Code, String)] = [
    (.notAStore(path: "/s", detail: "no data.mdb"), .notAStore, "/s is not an EventGraph store: no data.mdb"),
    (.alreadyExists(path: "/s"), .alreadyExists, "/s already holds a store"),
    (
      .newerFormat(path: "/s", found: 9, supported: 3), .newerFormat,
      "/s was written by a newer EventGraph (store format 9; this version reads up to 3)"
    ),
    (.unknownEntity("Car"), .unknownEntity, "unknown entity 'Car'"),
    (.abstractEntity("Shape"), .abstractEntity, "entity 'Shape' is abstract and cannot be inserted"),
    (.unknownProperty(entity: "Person", property: "age"), .unknownProperty, "entity 'Person' has no property 'age'"),
    (
      .notAnAttribute(entity: "Person", property: "team"), .notAnAttribute,
      "Person.team is a relationship, not an attribute"
    ),
    (
      .notARelationship(entity: "Person", property: "name"), .notARelationship,
      "Person.name is an attribute, not a relationship"
    ),
    (
      .wrongType(object: "Person/1", attribute: "age", detail: "expected int16, got string 'x'"), .wrongType,
      "Person/1.age: expected int16, got string 'x'"
    ),
    (.noSuchObject("Person/7"), .noSuchObject, "no object Person/7"),
    (
      .wrongDestination(object: "Person/1", relationship: "team", target: "Person/2", expected: "Team"),
      .wrongDestination, "Person/1.team: Person/2 is not a Team"
    ),
    (
      .invalidPosition(object: "List/1", relationship: "items", position: 5, count: 2), .invalidPosition,
      "List/1.items: position 5 is outside 0...2"
    ),
    (
      .validation(object: "Team/3", property: "members", rule: .minCount, message: "needs at least 2"), .validation,
      "Team/3.members: needs at least 2"
    ),
    (.corrupt("bad record"), .corrupt, "store is corrupt: bad record"),
    (.transactionEnded, .transactionEnded, "the transaction was used after its write closure returned"),
    (.readOnly(path: "/s"), .readOnly, "/s is open read-only"),
    (.unknownModelVersion(4), .unknownModelVersion, "the store has no model version 4"),
    (.versionExists(2), .versionExists, "the store holds model version 2 already"),
    (
      .damaged(path: "/s", detail: "/s/data.mdb is damaged (page 7): a page reached twice"), .damaged,
      "/s/data.mdb is damaged (page 7): a page reached twice; a salvage (EventStore.salvage) recovers the commits that remain"
    ),
    (
      .versionInUse(1, reason: "it is the active version"), .versionInUse,
      "model version 1 cannot be dropped: it is the active version"
    ),
    (
      .invalidCheckpointName("", maxLength: 200), .invalidCheckpointName,
      "checkpoint name '': a checkpoint's name must have 1 to 200 bytes of UTF-8"
    ),
    (
      .alreadyOpen(path: "/s"), .alreadyOpen,
      "/s is already open in this process: share the one EventStore object"
    ),
    (
      .versionChanged(path: "/s", opened: 1, active: 2), .versionChanged,
      "/s was opened at model version 1 but is now at version 2: move to it with atActiveVersion() (or open the store again) and build the commit against its model"
    ),
    (
      .sequenceBeyondLog(12, last: 10), .sequenceBeyondLog,
      "sequence 12 is beyond the end of the log (last is 10)"
    ),
    (.deletedObject("Person/1", asOf: nil), .deletedObject, "Person/1 was deleted"),
    (
      .deletedObject("Person/1", asOf: 5), .deletedObject,
      "Person/1 did not exist as of sequence 5 (created later or deleted by then)"
    ),
    (
      .modelMismatch(source: "Company v1", target: "Company v2"), .modelMismatch,
      "the stores have different models: Company v1 here, Company v2 in the target"
    ),
    (
      .referenceWouldMove(object: "Company/1", relationship: "boss", target: "Person/2", inverse: "company"),
      .referenceWouldMove,
      "Company/1.boss: referencing Person/2 from the copy would take it from the original (its inverse 'company' is to-one); copy it deep or skip it"
    ),
    (
      .referenceOutsideStore(object: "Company/1", relationship: "boss", target: "Person/2"),
      .referenceOutsideStore,
      "Company/1.boss: Person/2 is not copied and cannot be referenced from another store; copy it deep or skip it"
    ),
    (
      .referenceToDeleted(object: "Company/1", relationship: "boss", target: "Person/2"), .referenceToDeleted,
      "Company/1.boss: Person/2 has been deleted since and cannot be referenced from the copy; copy it deep or skip it"
    ),
    (.invalidIdentity("Person-7"), .invalidIdentity, "no object 'Person-7' (an identity is written Entity/N)"),
  ]

  static let modelErrors: [(ModelError, ModelError.Code, String)] = [
    (.unknownEntity("Car"), .unknownEntity, "unknown entity 'Car'"),
    (.duplicateEntity("Person"), .duplicateEntity, "entity 'Person' is declared twice"),
    (
      .duplicateProperty(entity: "Person", property: "name"), .duplicateProperty,
      "Person.name: property is declared twice"
    ),
    (
      .unknownParent(entity: "Employee", parent: "Human"), .unknownParent,
      "Employee: parent entity 'Human' does not exist"
    ),
    (.inheritanceCycle(entity: "A"), .inheritanceCycle, "A: entity inheritance forms a cycle"),
    (
      .unknownDestination(entity: "Person", relationship: "car", destination: "Car"), .unknownDestination,
      "Person.car: destination entity 'Car' does not exist"
    ),
    (
      .unknownInverse(entity: "Person", relationship: "team", inverse: "people"), .unknownInverse,
      "Person.team: inverse 'people' does not exist in the destination"
    ),
    (
      .inverseMismatch(entity: "Person", relationship: "team", inverse: "members", detail: "leads to Team"),
      .inverseMismatch, "Person.team: inverse 'members' leads to Team"
    ),
    (
      .invalidDefault(entity: "Person", attribute: "age", detail: "70000 does not fit int16"), .invalidDefault,
      "Person.age: invalid default: 70000 does not fit int16"
    ),
    (
      .invalidCounts(entity: "Team", relationship: "members", detail: "minCount 3 is above maxCount 2"),
      .invalidCounts, "Team.members: minCount 3 is above maxCount 2"
    ),
    (
      .orderedToOne(entity: "Person", relationship: "team"), .orderedToOne,
      "Person.team: 'ordered' needs 'toMany'"
    ),
    (
      .invalidName("1st"), .invalidName,
      "invalid name '1st': names are letters, digits and '_', not starting with a digit"
    ),
    (.tooLarge("70000 entities"), .tooLarge, "model too large: 70000 entities"),
    (
      .invalidFile(file: "a.model.json", detail: "line 3, column 2: expected a value"), .invalidFile,
      "a.model.json: line 3, column 2: expected a value"
    ),
  ]

  static let commit = CommitInfo(number: 7, firstSequence: 41, lastSequence: 43, time: Date(timeIntervalSince1970: 0))
  static let longKey = String(repeating: "k", count: 50)

  static let serviceErrors: [(ServiceError, ServiceError.Code, String)] = [
    (
      .invalidIdempotencyKey(longKey), .invalidIdempotencyKey,
      "idempotency key '\(String(repeating: "k", count: 40))' must be 1 to 400 bytes of UTF-8"
    ),
    (
      .invalidName("a:b"), .invalidName,
      "'a:b' is not a valid consumer or projection name (1 to 200 bytes, no ':')"
    ),
    (
      .projectionAlreadyRegistered("counts"), .projectionAlreadyRegistered,
      "a projection named 'counts' is already registered with this store"
    ),
    (
      .alreadyCommitted(key: "order-1", commit: commit), .alreadyCommitted,
      "idempotency key 'order-1' was already committed (commit 7 at sequence 41)"
    ),
    (.storeClosed(path: "/s"), .storeClosed, "/s is being closed: no more commits are taken"),
  ]

  @Test("every StoreError factory gives its code and today's message", arguments: storeErrors)
  func storeError(_ error: StoreError, _ code: StoreError.Code, _ message: String) {
    #expect(error.code == code)
    #expect(error.description == message)
  }

  @Test("every ModelError factory gives its code and today's message", arguments: modelErrors)
  func modelError(_ error: ModelError, _ code: ModelError.Code, _ message: String) {
    #expect(error.code == code)
    #expect(error.description == message)
  }

  @Test("every ServiceError factory gives its code and today's message", arguments: serviceErrors)
  func serviceError(_ error: ServiceError, _ code: ServiceError.Code, _ message: String) {
    #expect(error.code == code)
    #expect(error.description == message)
  }

  @Test("the tables name each code once, but for the two forms of a deleted object")
  func everyCodeOnce() {
    #expect(Set(Self.storeErrors.map(\.1)).count == Self.storeErrors.count - 1)
    #expect(Set(Self.modelErrors.map(\.1)).count == Self.modelErrors.count)
    #expect(Set(Self.serviceErrors.map(\.1)).count == Self.serviceErrors.count)
  }

  @Test("errors are equal when their code and fields are")
  func equality() {
    #expect(StoreError.readOnly(path: "/a") == .readOnly(path: "/a"))
    #expect(StoreError.readOnly(path: "/a") != .readOnly(path: "/b"))
    #expect(StoreError.readOnly(path: "/a") != .alreadyOpen(path: "/a"))
    #expect(StoreError.deletedObject("P/1", asOf: nil) != .deletedObject("P/1", asOf: 3))
    #expect(
      StoreError.validation(object: "P/1", property: "name", rule: .required, message: "required")
        == .validation(object: "P/1", property: "name", rule: .required, message: "required"))
    #expect(
      StoreError.validation(object: "P/1", property: "name", rule: .required, message: "required")
        != .validation(object: "P/1", property: "age", rule: .required, message: "required"))
    #expect(
      StoreError.validation(object: "P/1", property: "name", rule: .minLength, message: "short")
        != .validation(object: "P/1", property: "name", rule: .regularExpression, message: "short"))
    #expect(Set([StoreError.transactionEnded, .transactionEnded, .corrupt("x")]).count == 2)
    #expect(ModelError.unknownEntity("A") == .unknownEntity("A"))
    #expect(ModelError.unknownEntity("A") != .duplicateEntity("A"))
    #expect(ModelError.invalidFile(file: "a", detail: "x") != .invalidFile(file: "b", detail: "x"))
    #expect(ServiceError.invalidName("a:b") == .invalidName("a:b"))
    #expect(ServiceError.invalidName("a:b") != .projectionAlreadyRegistered("a:b"))
  }

  @Test("the context says where, in the shape of the code, for a catch that matches on the code")
  func fields() {
    let e = StoreError.validation(object: "Team/3", property: "members", rule: .minCount, message: "needs at least 2")
    #expect(e.context == .rule("Team/3", property: "members", rule: .minCount, problem: "needs at least 2"))
    #expect(e.object == "Team/3" && e.object?.id == ObjectID(3) && e.object?.entity == "Team")
    #expect(e.property == "members" && e.path == nil)
    let u = StoreError.notUnique(
      object: "Player/4", entity: "Player", attributes: ["club", "number"], value: "(1, 7)", holder: "Player/2")
    #expect(u.object == "Player/4" && u.property == "club, number")
    let m = ModelError.unknownDestination(entity: "Person", relationship: "car", destination: "Car")
    #expect(m.entity == "Person" && m.property == "car")
    #expect(m.context == .reference(entity: "Person", property: "car", name: "Car"))
    #expect(ModelError.invalidFile(file: "m.json", detail: "x").entity == nil)
    let s = ServiceError.alreadyCommitted(key: "order-1", commit: Self.commit)
    #expect(s.context == .committed(key: "order-1", commit: Self.commit))
    do {
      throw StoreError.readOnly(path: "/s")
    } catch let error as StoreError where error.code == .readOnly {
      #expect(error.path == "/s")
    } catch {
      Issue.record("caught \(error)")
    }
  }
}
