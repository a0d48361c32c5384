/// A `Codable` struct read and written as the objects of one entity.
///
/// Each stored property names an attribute or a relationship of the entity: an attribute
/// as the Swift type of its values (<doc:GettingStarted> has the table), a to-one
/// relationship as a ``Ref`` and a to-many one as an array of them. A property whose attribute is optional
/// in the model is an optional in the record.
///
/// ```swift
/// struct Person: Record {
///   static let entityName = "Person"
///   var name: String
///   var born: Date?
///   var employer: Ref<Company>?
///   var pets: [Ref<Pet>]
/// }
///
/// let id = try store.write { tx in try tx.insert(Person(name: "Ada", born: nil, employer: nil, pets: [])) }
/// let ada = try store.read { try $0.record(id) }  // Stored<Person>?
/// ```
///
/// The record type is checked against the model at its first use with a model (each
/// property's name and Swift type against the entity's property), and the check is kept:
/// a mismatch is a ``RecordError`` naming the entity, the property and the Swift type.
public protocol Record: Codable {
  /// The name of the entity whose objects this type reads and writes.
  static var entityName: String { get }

  /// The record of one object's values, read by position with no `Decoder` in between.
  ///
  /// The types `eventtool codegen` writes implement it (a read per property, in
  /// declaration order); any other record is read through its `init(from:)`, the default.
  init(reading values: RecordValues) throws
}

extension Record {
  public init(reading values: RecordValues) throws { try self.init(from: values.reader) }
}

/// The identity of an object of the entity of `Target`: a typed relationship value.
///
/// Outside the store it encodes as the identity's number.
public struct Ref<Target: Record>: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
  /// The object's identity.
  public let id: ObjectID

  public init(_ id: ObjectID) { self.id = id }

  public static func < (a: Self, b: Self) -> Bool { a.id < b.id }

  /// `Entity/N`.
  public var description: String { "\(Target.entityName)/\(id.rawValue)" }

  public init(from decoder: any Decoder) throws {
    self.id = ObjectID(try decoder.singleValueContainer().decode(UInt64.self))
  }

  public func encode(to encoder: any Encoder) throws {
    var c = encoder.singleValueContainer()
    try c.encode(id.rawValue)
  }
}

/// A record read from the store, with the identity and the version of its object.
///
/// The record's properties read through it (`stored.name`); ``record`` is the value to
/// change and write back with ``Transaction/update(_:_:)``. Its own members — `id`, `ref`,
/// `objectID`, `version`, `record` — come first: a record property of one of those names
/// is read as `stored.record.version`.
@dynamicMemberLookup
public struct Stored<R: Record> {
  /// The object's identity.
  public let id: Ref<R>
  /// The first event sequence of the last commit that changed the object
  /// (``Snapshot/version(of:)``): it grows with every change, so two reads with one version
  /// saw one state, and ``Expectation/object(_:version:)`` commits only if it is unchanged.
  public let version: UInt64
  /// The object's values.
  public var record: R

  // Always inlined: in the typed fetch's loop, which is generic over `R`, a call would look up
  // `Stored<R>`'s metadata once a record; inlined, the lookup leaves the loop.
  @inline(__always)
  public init(id: Ref<R>, version: UInt64, record: R) {
    self.id = id
    self.version = version
    self.record = record
  }

  public subscript<T>(dynamicMember path: KeyPath<R, T>) -> T { record[keyPath: path] }
}

extension Stored: Sendable where R: Sendable {}
extension Stored: Equatable where R: Equatable {}
extension Stored: Hashable where R: Hashable {}
