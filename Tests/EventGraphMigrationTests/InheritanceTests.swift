import Foundation
import TestSupport
import Testing

@testable import EventGraph
@testable import EventGraphMigration

/// Entity inheritance: a sub-entity's objects are also objects of its parent entity, but
/// each must be migrated once, by its own entity's mapping, and relationships to the parent
/// must keep links to sub-entity objects.
@Suite("Upcasting models with entity inheritance")
struct InheritanceTests {
  static func garage(version: Int, abstract: Bool, extra: String = "") -> String {
    """
    {"name": "Garage", "version": \(version), "entities": [
      {"name": "Vehicle", "abstract": \(abstract),
       "attributes": [{"name": "name", "type": "string"}\(extra)],
       "relationships": [{"name": "garage", "destination": "Garage", "optional": true, "inverse": "vehicles"}]},
      {"name": "Car", "parent": "Vehicle", "attributes": [{"name": "doors", "type": "int16", "optional": true}]},
      {"name": "Bike", "parent": "Vehicle", "attributes": [{"name": "gears", "type": "int16", "optional": true}]},
      {"name": "Garage",
       "attributes": [{"name": "label", "type": "string"}],
       "relationships": [{"name": "vehicles", "destination": "Vehicle", "toMany": true, "inverse": "garage"}]}
    ]}
    """
  }

  static func history(_ store: EventStore, seed: UInt64, commits: Int, abstract: Bool) throws {
    var g = SeededGenerator(seed: seed)
    for i in 0..<commits {
      try store.write(time: historyTime(i)) { tx in
        let garages = try tx.objects(of: "Garage")
        let vehicles = try tx.objects(of: "Vehicle")
        for _ in 0..<g.int(1...3) {
          switch g.int(0...7) {
          case 0: _ = try tx.insert("Garage", ["label": .string(g.pick(["North", "South"]))])
          case 1...3:
            let kinds = abstract ? ["Car", "Bike"] : ["Car", "Bike", "Vehicle"]
            let kind = g.pick(kinds)
            let v = try tx.insert(kind, ["name": .string(g.pick(["a", "b", "c"]))])
            if kind == "Car" { try tx.set(v, "doors", .int16(Int16(g.int(2...5)))) }
            if !garages.isEmpty && g.chance(0.7) { try tx.setRelationship(v, "garage", to: g.pick(garages)) }
          case 4 where !vehicles.isEmpty && !garages.isEmpty:
            let v = g.pick(vehicles)
            if try tx.object(v) != nil {
              try tx.setRelationship(v, "garage", to: g.chance(0.2) ? nil : g.pick(garages))
            }
          case 5 where !vehicles.isEmpty:
            let v = g.pick(vehicles)
            if try tx.object(v) != nil { try tx.set(v, "name", .string("z")) }
          case 6 where !vehicles.isEmpty:
            let v = g.pick(vehicles)
            if try tx.object(v) != nil { try tx.delete(v) }
          default: _ = try tx.insert("Garage", ["label": .string("East")])
          }
        }
      }
    }
  }

  @Test("each object is migrated once, as its own entity, links to sub-entity objects kept", arguments: [false, true])
  func inferred(abstract: Bool) throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/garage"
    var car: ObjectID?
    var garage: ObjectID?
    do {
      let store = try EventStore.create(at: path, model: try model(Self.garage(version: 1, abstract: abstract)))
      try store.write { tx in
        garage = try tx.insert("Garage", ["label": .string("North")])
        car = try tx.insert("Car", ["name": .string("Beetle"), "doors": .int16(2)])
        try tx.setRelationship(try #require(car), "garage", to: garage)
      }
    }
    let v2 = Self.garage(
      version: 2, abstract: abstract, extra: #", {"name": "colour", "type": "string", "optional": true}"#)
    _ = try EventStore.upcast(at: path, to: try model(v2), mapping: nil)
    let store = try EventStore(path: path)
    let lines = try exportLines(store)
    #expect(lines.count == 2, "\(lines)")
    try store.read { s throws in
      let car = try #require(car)
      #expect(try s.entity(of: car).name == "Car")
      #expect(try s.value(car, "doors") == .int16(2))
      #expect(try s.related(try #require(garage), "vehicles") == [car])
    }
  }

  @Test(
    "an inferred upcast of an inheritance model commutes with the mapping", arguments: [false, true],
    [61, 62] as [UInt64])
  func commutes(abstract: Bool, seed: UInt64) throws {
    let v2 = Self.garage(
      version: 2, abstract: abstract, extra: #", {"name": "colour", "type": "string", "optional": true}"#)
    try checkCommutation(
      v1: try model(Self.garage(version: 1, abstract: abstract)), v2: try model(v2), mapping: nil,
      kept: [("Car", "Car"), ("Bike", "Bike"), ("Vehicle", "Vehicle"), ("Garage", "Garage")]
    ) { store in
      try Self.history(store, seed: seed, commits: 30, abstract: abstract)
    }
  }
}
