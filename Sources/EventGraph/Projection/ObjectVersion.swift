internal import LMDB

/// An object as it was at a past sequence: attribute values and relationships.
public struct ObjectVersion: Sendable, Hashable {
  public var state: ObjectState
  /// Targets per relationship, in order where ordered; empty relationships are absent.
  public var relationships: [PropertyID: [ObjectID]]

  /// Replays the commits in the object's history up to `sequence` (decoded through
  /// `commits`, which keeps them for the next object).
  static func rebuild<T: TransactionReading>(
    _ id: ObjectID, asOf sequence: UInt64, reader: GraphReader<T>, commits: inout CommitIndexCache
  ) throws -> ObjectVersion? {
    let model = reader.model
    var version: ObjectVersion? = nil
    for first in try reader.history(id) where first <= sequence {
      let commit = try commits.commit(first, reader: reader)
      if commit.isBase {
        version = commit.baseVersion(of: id)
        continue
      }
      for (seq, event) in commit.events(naming: id) where seq <= sequence {
        fold(&version, event, id: id, model: model) { rel, o in inverse(of: rel, from: o, model: model, reader: reader)
        }
      }
    }
    return finished(version, model: model)
  }

  /// Folds one event into the version of `id` being rebuilt from its history; `inverse`
  /// gives the inverse of a relationship of another object (the side `id` is on).
  static func fold(
    _ version: inout ObjectVersion?, _ event: Event, id: ObjectID, model: Model,
    inverse: (PropertyID, ObjectID) throws -> PropertyID?
  ) rethrows {
    switch event {
    case .insert(let o, let e) where o == id:
      let count = model.entity(e)?.properties.count ?? 0
      version = ObjectVersion(state: ObjectState(id: id, entity: e, propertyCount: count), relationships: [:])
    case .set(let o, let a, let v) where o == id:
      version?.state.set(a, v)
    case .delete(let o) where o == id:
      version = nil
    case .erase:
      break
    case .link(let o, let rel, let t, let position):
      // Both sides when an object links to itself (an employee who is their own manager).
      if o == id { version?.insert(t, into: rel, at: position) }
      if t == id, let inv = try inverse(rel, o) { version?.insert(o, into: inv, at: nil) }
    case .unlink(let o, let rel, let t):
      if o == id { version?.remove(t, from: rel) }
      if t == id, let inv = try inverse(rel, o) { version?.remove(o, from: inv) }
    default:
      break
    }
  }

  /// A rebuilt version as the projection would hold it: unordered relationships in
  /// identity order.
  static func finished(_ version: ObjectVersion?, model: Model) -> ObjectVersion? {
    guard var v = version, let e = model.entity(v.state.entity) else { return version }
    for r in e.relationships where !r.isOrdered { v.relationships[r.id]?.sort() }
    return v
  }

  private static func inverse<T: TransactionReading>(
    of rel: PropertyID, from o: ObjectID, model: Model, reader: GraphReader<T>
  ) -> PropertyID? {
    guard let e = try? reader.entity(of: o), case .relationship(let r)? = model.entity(e)?.property(rel)?.kind
    else { return nil }
    return r.inverse
  }

  mutating func insert(_ t: ObjectID, into rel: PropertyID, at position: Int?) {
    var list = relationships[rel] ?? []
    let at = min(max(position ?? list.count, 0), list.count)
    list.insert(t, at: at)
    relationships[rel] = list
  }

  mutating func remove(_ t: ObjectID, from rel: PropertyID) {
    guard var list = relationships[rel], let i = list.firstIndex(of: t) else { return }
    list.remove(at: i)
    relationships[rel] = list.isEmpty ? nil : list
  }
}
