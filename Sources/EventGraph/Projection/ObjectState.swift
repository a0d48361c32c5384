/// The current attribute values of one object, as the projection keeps them.
public struct ObjectState: Sendable, Hashable {
  public let id: ObjectID
  public let entity: EntityID
  /// Values by ``PropertyID``; relationship slots and unset attributes are `nil`.
  public internal(set) var values: [Value?]

  init(id: ObjectID, entity: EntityID, propertyCount: Int) {
    self.id = id
    self.entity = entity
    // Filled by appends: `Array(repeating:count:)` allocates through a generic entry point of
    // the standard library that looks the array's type up at run time, at a cost of several
    // times these appends (once per inserted or decoded object).
    var values: [Value?] = []
    values.reserveCapacity(propertyCount)
    for _ in 0..<propertyCount { values.append(nil) }
    self.values = values
  }

  /// The value of an attribute.
  ///
  /// A state with no values, standing for an object known only by identity and entity.
  static func placeholder(id: ObjectID, entity: EntityID) -> ObjectState {
    ObjectState(id: id, entity: entity, propertyCount: 0)
  }

  public subscript(_ attribute: PropertyID) -> Value? {
    let i = Int(attribute.rawValue)
    return i < values.count ? values[i] : nil
  }

  mutating func set(_ attribute: PropertyID, _ value: Value?) {
    let i = Int(attribute.rawValue)
    if i >= values.count { values.append(contentsOf: [Value?](repeating: nil, count: i + 1 - values.count)) }
    values[i] = value
  }
}

extension ObjectState {
  /// The `objects` database value: varint entity, varint count, then (varint property, value).
  func encoded() -> [UInt8] {
    var w = BinaryWriter(capacity: estimatedSize)
    encode(into: &w)
    return w.bytes
  }

  /// Appends the `objects` record to `w` (a writer reused for many objects allocates once).
  func encode(into w: inout BinaryWriter) {
    w.varint(UInt64(entity.rawValue))
    let countAt = w.countPlaceholder()
    var count: UInt64 = 0
    for i in values.indices {
      guard let v = values[i] else { continue }
      w.varint(UInt64(i))
      w.value(v)
      count += 1
    }
    w.fillCount(count, at: countAt)
  }

  /// About the size of the record, so that its buffer is allocated once.
  var estimatedSize: Int {
    var n = 8
    for i in values.indices where values[i] != nil { n += 3 + BinaryWriter.estimatedSize(of: values[i]) }
    return n
  }

  static func decode(_ bytes: UnsafeRawBufferPointer, id: ObjectID, model: Model) throws(CorruptionError)
    -> ObjectState
  {
    try readRecord(bytes, id: id, model: model) { (r, entity, count) throws(CorruptionError) in
      var state = ObjectState(id: id, entity: entity.id, propertyCount: entity.properties.count)
      for _ in 0..<count {
        let p = try r.property(of: entity)
        state.set(PropertyID(rawValue: UInt16(p)), try r.value())
      }
      return state
    }
  }

  /// Reads the head of an `objects` record — its entity, which `model` must know, and its
  /// count of entries — and lets `body` read the entries; a failure names the object.
  ///
  /// Shared by the two ways of reading a record (decoded here, kept encoded by
  /// ``ProjectedObject``), so that the layout's head is read in one place.
  ///
  /// An entry's property must be one of the entity's: a damaged record naming property
  /// 65535 would otherwise make every decode allocate room for 65,536 values.
  static func readRecord<R>(
    _ bytes: UnsafeRawBufferPointer, id: ObjectID, model: Model,
    _ body: (inout BinaryReader, Entity, Int) throws(CorruptionError) -> R
  ) throws(CorruptionError) -> R {
    var r = BinaryReader(bytes)
    do throws(CorruptionError) {
      let entity = EntityID(rawValue: UInt16(try r.int(max: UInt64(UInt16.max))))
      guard let e = model.entity(entity) else { throw r.failure("unknown entity \(entity.rawValue)") }
      let count = try r.int()
      return try body(&r, e, count)
    } catch {
      var e = error
      e.context = "object \(id.rawValue)"
      throw e
    }
  }
}

extension BinaryReader {
  /// The property of an `objects` record's entry, which must be one of `entity`'s.
  mutating func property(of entity: Entity) throws(CorruptionError) -> Int {
    let p = try varint()
    guard p < UInt64(entity.properties.count) else {
      throw failure("property \(p) beyond the \(entity.properties.count) properties of \(entity.name)")
    }
    return Int(p)
  }
}
