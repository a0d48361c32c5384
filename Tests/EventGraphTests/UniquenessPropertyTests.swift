import Foundation
import TestSupport
import Testing

@testable import EventGraph

/// The law of the uniqueness index: whatever history of inserts, changes, exchanges and
/// deletes the store accepted, no two live objects share a constrained tuple, every
/// refusal was for a tuple another live object held, and a replay makes the same index.
@Suite("Uniqueness constraints on random histories")
struct UniquenessPropertyTests {
  @Test(
    "accepted histories keep tuples unique; refusals name a real holder; replay equals the index",
    arguments: stressSeeds([1, 2, 3]))
  func randomHistories(seed: UInt64) throws {
    var g = SeededGenerator(seed: seed)
    let (store, dir) = try makeStore(try UniquenessTests.model())
    defer { removeDirectory(dir) }
    var live: [ObjectID] = []
    var (accepted, refused) = (0, 0)
    let handles = ["a", "b", "c", "d", "e", "f"]
    for _ in 0..<120 {
      // A commit of one to four changes, some of which exchange values between objects.
      var made: [ObjectID] = []
      let result = Result {
        try store.write { tx in
          made = []
          for _ in 0..<g.int(1...4) {
            let pool = live + made
            switch g.int(0...5) {
            case 0, 1:
              let o = try tx.insert(
                g.chance(0.3) ? "Employee" : "Person",
                [
                  "handle": g.chance(0.8) ? .string(g.pick(handles)) : nil, "club": .string(g.pick(["x", "y"])),
                  "number": g.chance(0.7) ? .int32(Int32(g.int(1...3))) : nil,
                ])
              if try tx.entity(of: o).name == "Employee" { try tx.set(o, "badge", .int64(Int64(g.int(1...4)))) }
              made.append(o)
            case 2 where !pool.isEmpty:
              try tx.set(g.pick(pool), "handle", g.chance(0.8) ? .string(g.pick(handles)) : nil)
            case 3 where pool.count >= 2:
              let (x, y) = (g.pick(pool), g.pick(pool))
              let (hx, hy) = (try tx.value(x, "handle"), try tx.value(y, "handle"))
              try tx.set(x, "handle", hy)
              try tx.set(y, "handle", hx)
            case 4 where !pool.isEmpty:
              let o = g.pick(pool)
              try tx.delete(o)
              made.removeAll { $0 == o }
              live.removeAll { $0 == o }
            case 5 where !pool.isEmpty: try tx.set(g.pick(pool), "number", .int32(Int32(g.int(1...3))))
            default: break
            }
          }
          return made
        }
      }
      switch result {
      case .success: accepted += 1
      case .failure(let e as StoreError) where e.code == .notUnique:
        refused += 1
        // The holder it names is alive, or was made by the refused commit itself, and then
        // named as new: its identity was never committed.
        let holder = try #require(e.target)
        if holder.origin == nil {
          #expect(try store.read { s in try s.object(holder.id) != nil }, "\(e)")
        } else {
          #expect(made.contains(holder.id) && "\(holder)".hasPrefix("new "), "\(e)")
        }
      case .failure(let e as StoreError) where e.code == .validation || e.code == .noSuchObject: continue
      case .failure(let e): Issue.record("unexpected \(e)")
      }
      live = try store.read { s in try s.objects(of: "Person") }
    }
    // The histories test both sides.
    #expect(accepted >= 20 && refused >= 20, "\(accepted) accepted, \(refused) refused")
    try store.read { s in
      var seen: [String: Set<[Value]>] = [:]
      for o in try s.objects(of: "Person") {
        let entity = try s.entity(of: o).name
        for (name, attributes) in [("handle", ["handle"]), ("clubNumber", ["club", "number"])] {
          let values = try attributes.compactMap { try s.value(o, $0) }
          guard values.count == attributes.count else { continue }
          #expect(seen[name, default: []].insert(values).inserted, "\(name) \(values) twice")
        }
        if entity == "Employee", let badge = try s.value(o, "badge") {
          #expect(seen["badge", default: []].insert([badge]).inserted, "badge \(badge) twice")
        }
      }
    }
    #expect(try store.verify().isOK)
    _ = try store.rebuild()
    #expect(try store.verify().isOK)
  }
}
