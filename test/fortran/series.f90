! A Fortran time series through HDF5's Fortran library: a chunked,
! extendible 2-D dataset, a column of 1,000 values a step, h5fflush_f after
! each (with HDF5_DRIVER=journal, each a commit).
!   series write STEPS   writes, printing "committed S" after each flush
!   series check ROWS    reads the file: at least ROWS steps, every value right
program series
  use hdf5
  implicit none
  integer, parameter :: n = 1000
  character(len=16) :: mode, arg
  integer :: count, err
  call get_command_argument(1, mode)
  call get_command_argument(2, arg)
  read (arg, *) count
  call h5open_f(err)
  if (mode == 'write') then
    call write_steps(count)
  else
    call check_steps(count)
  end if
  call h5close_f(err)
contains
  subroutine write_steps(steps)
    integer, intent(in) :: steps
    integer(hid_t) :: file, space, dset, dcpl, mspace, fspace
    integer(hsize_t) :: dims(2), maxd(2), chunk(2), start(2), cnt(2)
    real(8) :: column(n, 1)
    integer :: s, i, err
    call h5fcreate_f('series.h5', H5F_ACC_TRUNC_F, file, err)
    if (err /= 0) stop 1
    dims = [int(n, hsize_t), 0_hsize_t]
    maxd = [int(n, hsize_t), H5S_UNLIMITED_F]
    chunk = [int(n, hsize_t), 1_hsize_t]
    cnt = chunk
    call h5screate_simple_f(2, dims, space, err, maxd)
    call h5pcreate_f(H5P_DATASET_CREATE_F, dcpl, err)
    call h5pset_chunk_f(dcpl, 2, chunk, err)
    call h5dcreate_f(file, 'temperature', H5T_NATIVE_DOUBLE, space, dset, err, dcpl)
    call h5screate_simple_f(2, cnt, mspace, err)
    do s = 0, steps - 1
      dims(2) = s + 1
      call h5dset_extent_f(dset, dims, err)
      call h5dget_space_f(dset, fspace, err)
      start = [0_hsize_t, int(s, hsize_t)]
      call h5sselect_hyperslab_f(fspace, H5S_SELECT_SET_F, start, cnt, err)
      do i = 1, n
        column(i, 1) = s * 1000.0d0 + i
      end do
      call h5dwrite_f(dset, H5T_NATIVE_DOUBLE, column, cnt, err, mspace, fspace)
      if (err /= 0) stop 2
      call h5sclose_f(fspace, err)
      call h5fflush_f(file, H5F_SCOPE_GLOBAL_F, err)
      if (err /= 0) stop 3
      print '(a,i0)', 'committed ', s
      flush (6)
    end do
    call h5sclose_f(mspace, err)
    call h5dclose_f(dset, err)
    call h5pclose_f(dcpl, err)
    call h5sclose_f(space, err)
    call h5fclose_f(file, err)
    if (err /= 0) stop 4
  end subroutine

  subroutine check_steps(rows)
    integer, intent(in) :: rows
    integer(hid_t) :: file, dset, space
    integer(hsize_t) :: dims(2), maxd(2)
    real(8), allocatable :: all(:, :)
    integer :: s, i, err
    call h5fopen_f('series.h5', H5F_ACC_RDONLY_F, file, err)
    if (err /= 0) stop 11
    call h5dopen_f(file, 'temperature', dset, err)
    call h5dget_space_f(dset, space, err)
    call h5sget_simple_extent_dims_f(space, dims, maxd, err)
    if (dims(2) < rows) then
      print '(a,i0,a,i0)', 'only ', dims(2), ' steps, acknowledged ', rows
      stop 12
    end if
    allocate (all(n, dims(2)))
    call h5dread_f(dset, H5T_NATIVE_DOUBLE, all, dims, err)
    if (err /= 0) stop 13
    do s = 0, int(dims(2)) - 1
      do i = 1, n
        if (all(i, s + 1) /= s * 1000.0d0 + i) then
          print '(a,i0,a,i0)', 'wrong value at step ', s, ', element ', i
          stop 14
        end if
      end do
    end do
    print '(i0,a)', dims(2), ' steps, every value right'
    call h5sclose_f(space, err)
    call h5dclose_f(dset, err)
    call h5fclose_f(file, err)
  end subroutine
end program series
