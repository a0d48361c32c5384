/// The byte work of ``ProjectedObject``: reading a stored record without decoding its values,
/// finding one entry, and copying the entries into a new record.
extension ProjectedObject {
  /// Reads an `objects` record, checking every entry as ``ObjectState/decode(_:id:model:)``
  /// does, but decoding no value: the entries are kept as they are.
  ///
  /// A record whose entries are out of order, repeated or empty (never written by
  /// ``ObjectState/encode(into:)``) is decoded at once, so that it is written back as a
  /// decoded one would be.
  static func decode(_ bytes: UnsafeRawBufferPointer, id: ObjectID, model: Model) throws(CorruptionError)
    -> ProjectedObject
  {
    try ObjectState.readRecord(bytes, id: id, model: model) { (r, entity, count) throws(CorruptionError) in
      let start = r.offset
      var inOrder = true
      var last = -1
      for _ in 0..<count {
        let p = try r.property(of: entity)
        inOrder = inOrder && p > last && r.offset < bytes.count && bytes[r.offset] != ValueTag.none.rawValue
        last = p
        try r.checkValue()
      }
      guard inOrder else {
        return ProjectedObject(try ObjectState.decode(bytes, id: id, model: model))
      }
      // SAFETY: `start..<r.offset` lies inside `bytes`, which the reader walked; the entries
      // are copied out of the map before the transaction writes again.
      let entries = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[start..<r.offset]))
      return ProjectedObject(id: id, entity: entity.id, propertyCount: entity.properties.count, stored: entries)
    }
  }

  /// Where the value of `attribute` starts in ``stored``; `nil` when it has none.
  func storedOffset(_ attribute: PropertyID) throws -> Int? {
    let wanted = UInt64(attribute.rawValue)
    // SAFETY: the buffer is `stored`'s own, read only during the call.
    return try stored.withUnsafeBytes { (b) -> Int? in
      var r = BinaryReader(b)
      while !r.isAtEnd {
        let p = try r.varint()
        if p == wanted { return r.offset }
        if p > wanted { return nil }  // entries are in property order
        try r.skipValue()
      }
      return nil
    }
  }

  /// The stored value of `attribute`, decoded; `nil` when it has none.
  func storedValue(_ attribute: PropertyID) throws -> Value? {
    guard let at = try storedOffset(attribute) else { return nil }
    // SAFETY: the buffer is `stored`'s own, read only during the call; `at` is inside it.
    return try stored.withUnsafeBytes { (b) -> Value? in
      var r = BinaryReader(b)
      r.offset = at
      return try r.value()
    }
  }

  /// Sets every stored value in `state`.
  func decodeStored(into state: inout ObjectState) throws {
    // SAFETY: the buffer is `stored`'s own, read only during the call.
    try stored.withUnsafeBytes { b in
      var r = BinaryReader(b)
      while !r.isAtEnd {
        let p = try r.varint()
        state.set(PropertyID(rawValue: UInt16(p)), try r.value())
      }
    }
  }

  /// Appends the `objects` record, the stored entries no one changed copied as they are,
  /// the changes written anew, all in property order.
  func encodeStored(into w: inout BinaryWriter) throws {
    w.varint(UInt64(entity.rawValue))
    let countAt = w.countPlaceholder()
    var count: UInt64 = 0
    let changes = self.changes  // one read of the property, not one per entry
    var next = changes.startIndex
    // SAFETY: the buffer is `stored`'s own, read only during the call; each entry's range
    // is one the reader walked.
    try stored.withUnsafeBytes { b in
      var r = BinaryReader(b)
      while !r.isAtEnd {
        let start = r.offset
        let p = try r.varint()
        try r.skipValue()
        while next < changes.endIndex && UInt64(changes[next].property.rawValue) < p {
          count += w.entry(changes[next])
          next += 1
        }
        if next < changes.endIndex && UInt64(changes[next].property.rawValue) == p {
          count += w.entry(changes[next])
          next += 1
        } else {
          w.bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: b[start..<r.offset]))
          count += 1
        }
      }
    }
    while next < changes.endIndex {
      count += w.entry(changes[next])
      next += 1
    }
    w.fillCount(count, at: countAt)
  }
}

extension BinaryWriter {
  /// Writes an entry of an `objects` record unless its value is `nil`.
  ///
  /// - Returns: the number of entries written (0 or 1).
  fileprivate mutating func entry(_ e: (property: PropertyID, value: Value?)) -> UInt64 {
    guard let v = e.value else { return 0 }
    varint(UInt64(e.property.rawValue))
    value(v)
    return 1
  }
}
