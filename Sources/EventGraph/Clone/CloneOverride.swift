import Foundation

/// How a clone fills one attribute of a copy instead of copying the original's value: a
/// fixed value, or a value computed from the original object.
///
/// ```swift
/// let copy = try store.clone(root: acme, overrides: [
///   "Company.name": .appending(" (copy)"),      // only companies
///   "badge": .newUUID,                           // every entity with a `badge`
///   "Company.founded": .now,
///   "Employee.name": AttributeOverride { c in  // computed from the original
///     c.value.map { .string("\($0.stringValue ?? "") #\(c.copy.rawValue)") }
///   },
/// ])
/// ```
///
/// Keys are `"Entity.attribute"` (that entity and its sub-entities) or a bare
/// `"attribute"` (every copied entity that has one); the nearest qualified key wins.
/// The result is converted to the attribute's type as ``Transaction/set(_:_:_:)`` does;
/// `nil` leaves the copy without a value.
///
/// ## Extension point: value expressions
///
/// An override is a closure over a ``Context``, so any evaluator can provide one. The
/// query language's value expressions (`name + " (copy)"`, `uuid()`, `now()`) plug in as
/// an extension (`CloneOverride+Expression.swift`) that compiles the text once and
/// evaluates it per copy:
///
/// ```swift
/// extension AttributeOverride {
///   public static func expression(_ text: String) throws -> AttributeOverride {
///     let compiled = try ValueExpression(parsing: text)         // the query language's
///     return AttributeOverride { context in try compiled.evaluate(context) }
///   }
/// }
/// ```
///
/// A compiled expression needs to be `Sendable`; a parse error is thrown before the
/// clone starts, so a bad expression writes nothing.
public struct AttributeOverride: Sendable {
  /// What an override sees of the object being copied.
  public struct Context: Sendable {
    public let model: Model
    /// The entity of the original (and of the copy).
    public let entity: Entity
    /// The attribute being filled.
    public let attribute: Attribute
    /// The original object's identity.
    public let source: ObjectID
    /// The copy's identity.
    public let copy: ObjectID
    /// Whether this object is the root of the clone.
    public let isRoot: Bool
    /// The original as the clone reads it (as of its sequence): values and relationships.
    public let original: ObjectVersion
    /// The time of the clone, the same for every copy (`now()`).
    public let time: Date

    /// The original's value of the attribute being filled.
    public var value: Value? { original.state[attribute.id] }

    /// The original's value of another attribute, by name.
    public func value(_ name: String) -> Value? {
      entity.attribute(named: name).flatMap { original.state[$0.id] }
    }
  }

  /// Computes the copy's value; `nil` means no value.
  public typealias Compute = @Sendable (Context) throws -> Value?

  let compute: Compute

  /// An override computed per copy.
  public init(_ compute: @escaping Compute) { self.compute = compute }

  /// The same value for every copy (`nil`: the copies have none).
  public static func value(_ value: Value?) -> AttributeOverride { AttributeOverride { _ in value } }

  /// A new random UUID for every copy.
  public static let newUUID = AttributeOverride { _ in .uuid(UUID()) }

  /// The clone's time.
  public static let now = AttributeOverride { .date($0.time) }

  /// The original string with `suffix` after it (`" (copy)"`); no value stays no value.
  public static func appending(_ suffix: String) -> AttributeOverride {
    AttributeOverride { c in c.value.map { .string(($0.stringValue ?? "\($0)") + suffix) } }
  }

  /// The original's value, on the root only; the other copies keep theirs.
  public func onlyOnRoot() -> AttributeOverride {
    let compute = self.compute
    return AttributeOverride { c in c.isRoot ? try compute(c) : c.value }
  }
}

/// The attribute overrides of one call, checked and resolved per entity and attribute.
struct AttributeOverrideTable: Sendable {
  /// Indexed by entity, then by property; `nil` copies the original's value.
  private let table: [[AttributeOverride?]]
  let isEmpty: Bool

  /// - Throws: ``StoreError`` naming the entity and name of a key that does not fit.
  init(model: Model, overrides: [String: AttributeOverride], scope: Entity) throws(StoreError) {
    let keys = try OverrideKeys(model: model, keys: Array(overrides.keys), scope: scope, kind: .attribute)
    var table: [[AttributeOverride?]] = []
    for e in model.entities {
      var row = [AttributeOverride?](repeating: nil, count: e.properties.count)
      if !overrides.isEmpty {
        for a in e.attributes {
          row[Int(a.id.rawValue)] = keys.value(for: a.name, in: e, model: model, from: overrides)
        }
      }
      table.append(row)
    }
    self.table = table
    self.isEmpty = overrides.isEmpty
  }

  func override(_ entity: EntityID, _ attribute: PropertyID) -> AttributeOverride? {
    let e = Int(entity.rawValue)
    let p = Int(attribute.rawValue)
    guard e < table.count, p < table[e].count else { return nil }
    return table[e][p]
  }
}
