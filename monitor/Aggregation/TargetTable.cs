namespace Diagnostics.Monitor.Aggregation;

/// <summary>
/// Target names interned to small ids: a source names a file, socket or device once, when it
/// first sees it, and every event after that carries the id. Bounded: past
/// <see cref="Capacity"/> distinct names new targets share one "(too many targets)" id, counted.
/// Used by one thread at a time (the source's reader, under the aggregator's gate).
/// </summary>
public sealed class TargetTable
{
    public const int Capacity = 65_536;
    private readonly Dictionary<(string, TargetKind), int> _ids = [];
    private readonly List<(string Name, TargetKind Kind)> _names = [];
    private readonly int _overflow;

    public TargetTable() => _overflow = Intern("(too many targets)", TargetKind.Other);

    public long Overflowed { get; private set; }

    public int Intern(string name, TargetKind kind)
    {
        if (_ids.TryGetValue((name, kind), out int id))
            return id;
        if (_names.Count >= Capacity)
        {
            Overflowed++;
            return _overflow;
        }
        id = _names.Count;
        _names.Add((name, kind));
        _ids[(name, kind)] = id;
        return id;
    }

    public (string Name, TargetKind Kind) this[int id] => _names[id];
}
