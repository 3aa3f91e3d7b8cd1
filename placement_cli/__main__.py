from placement_cli.app.launch import main

main()
