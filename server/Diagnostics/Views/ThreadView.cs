using System.ComponentModel;
using System.Diagnostics;
using Diagnostics.Contracts;
using Diagnostics.Server.Diagnostics.Disk;
using Diagnostics.Server.Diagnostics.Kernel;
using Diagnostics.Server.Diagnostics.Threads;
using Diagnostics.Server.Memory;

namespace Diagnostics.Server.Diagnostics.Views;

/// <summary>
/// The thread table: every thread of the process as the kernel lists it, joined by OS thread id
/// with what the server's own accounting knows of it (tracked memory, command and network
/// counters, disk I/O, the in-flight slot). Threads that exited but still own tracked memory or
/// reported I/O stay listed, marked not alive, so their bytes are never unaccounted for.
/// </summary>
public static class ThreadView
{
    private sealed class Row
    {
        public int OsThreadId;
        public int ManagedId;
        public string? Name;
        public bool Alive;
        public double User;
        public double System;
        public ThreadMemoryRecord? Memory;
        public ThreadCounters? Counters;
        public DiskIoRecord? Disk;
        public KernelIoCounters? KernelIo;
    }

    /// <summary>
    /// The table. <paramref name="kernelThreads"/> is a list <see cref="KernelThreads"/> already
    /// read (the sampler reads it once for CPU shares); <paramref name="includeKernelIo"/> false
    /// skips one /proc read per thread where the io counters are not wanted.
    /// </summary>
    public static ThreadSnapshot[] Build(ThreadCpuTracker? cpu, List<(int Tid, string Name, double User, double System)>? kernelThreads = null, bool includeKernelIo = true)
    {
        // Server-side records first, keyed by their managed thread: a thread id the kernel reused
        // for a new thread must not merge the old thread's figures into the new one.
        var managed = new Dictionary<Thread, Row>(ReferenceEqualityComparer.Instance);
        Row RowOf(Thread thread, int tid)
        {
            if (!managed.TryGetValue(thread, out var row))
                managed[thread] = row = new Row { OsThreadId = tid, ManagedId = thread.ManagedThreadId, Name = thread.Name, Alive = thread.IsAlive };
            return row;
        }
        foreach (var record in ThreadMemoryRegistry.Snapshot())
            RowOf(record.Thread, record.OsThreadId).Memory = record;
        foreach (var counters in ThreadCounters.All())
            RowOf(counters.Thread, counters.OsThreadId).Counters = counters;
        foreach (var disk in DiskIo.Snapshot())
            RowOf(disk.Thread, disk.OsThreadId).Disk = disk;

        var byTid = new Dictionary<int, Row>();
        foreach (var row in managed.Values)
            if (row.Alive)
                byTid[row.OsThreadId] = row;
        var rows = new List<Row>(managed.Values);
        foreach (var (tid, name, user, system) in kernelThreads ?? KernelThreads())
        {
            if (!byTid.TryGetValue(tid, out var row))
            {
                row = new Row { OsThreadId = tid, Alive = true };
                rows.Add(row);
            }
            row.Name ??= name;
            row.User = user;
            row.System = system;
            row.KernelIo = includeKernelIo ? ProcFs.ReadThreadIo(tid) : null;
        }

        var result = new ThreadSnapshot[rows.Count];
        for (int i = 0; i < rows.Count; i++)
            result[i] = Snapshot(rows[i], cpu);
        Array.Sort(result, (a, b) => a.OsThreadId.CompareTo(b.OsThreadId));
        return result;
    }

    /// <summary>Every live thread's OS id, name and CPU seconds, from /proc or, elsewhere, the process's thread list.</summary>
    public static List<(int Tid, string Name, double User, double System)> KernelThreads()
    {
        var threads = new List<(int, string, double, double)>();
        if (ProcFs.Available)
        {
            foreach (int tid in ProcFs.ThreadIds())
                if (ProcFs.TryReadThreadStat(tid, out string name, out double user, out double system))
                    threads.Add((tid, name, user, system));
            return threads;
        }
        using var process = Process.GetCurrentProcess();
        foreach (ProcessThread thread in process.Threads)
        {
            try
            {
                threads.Add((thread.Id, "", thread.UserProcessorTime.TotalSeconds, thread.PrivilegedProcessorTime.TotalSeconds));
            }
            catch (Exception ex) when (ex is InvalidOperationException or Win32Exception or NotSupportedException)
            {
                // The thread ended while being read.
            }
        }
        return threads;
    }

    private static ThreadSnapshot Snapshot(Row row, ThreadCpuTracker? cpu)
    {
        string name = row.Name ?? $"thread {row.OsThreadId}";
        long diskRead = 0, diskWrite = 0, diskOps = 0;
        if (row.Disk is { } disk)
        {
            foreach (var purpose in Enum.GetValues<DiskIoPurpose>())
            {
                var figures = disk.Read(purpose);
                diskOps += figures.Count;
                if (DiskIo.IsRead(purpose))
                    diskRead += figures.Bytes;
                else
                    diskWrite += figures.Bytes;
            }
        }
        long commands = 0;
        if (row.Counters is { } counters)
            foreach (long calls in counters.Calls)
                commands += calls;
        return new ThreadSnapshot
        {
            OsThreadId = row.OsThreadId,
            ManagedThreadId = row.ManagedId,
            Name = name,
            Role = ThreadRoles.Of(name, row.OsThreadId),
            Alive = row.Alive,
            CpuUserSeconds = row.User,
            CpuSystemSeconds = row.System,
            CpuPercent = row.Alive && cpu is not null ? cpu.PercentOf(row.OsThreadId) : 0,
            TrackedBytes = row.Memory?.LiveBytes ?? 0,
            TrackedAllocatedBytes = row.Memory?.AllocatedBytes ?? 0,
            TrackedFreedBytes = row.Memory?.FreedBytes ?? 0,
            NetInputBytes = row.Counters is null ? 0 : Volatile.Read(ref row.Counters.NetInputBytes),
            NetOutputBytes = row.Counters is null ? 0 : Volatile.Read(ref row.Counters.NetOutputBytes),
            TlsHandshakes = row.Counters is null ? 0 : Volatile.Read(ref row.Counters.TlsHandshakes),
            TlsHandshakeMicros = row.Counters is null ? 0 : Volatile.Read(ref row.Counters.TlsHandshakeMicros),
            CommandsProcessed = commands,
            DiskReadBytes = diskRead,
            DiskWriteBytes = diskWrite,
            DiskOperations = diskOps,
            KernelIo = row.KernelIo,
            Running = row.Counters is null ? null : InFlightView.Read(row.Counters),
        };
    }
}
